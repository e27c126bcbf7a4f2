import { createHash } from 'node:crypto';
import { InMemoryFs } from 'just-bash/browser';
import { describe, expect, it } from 'vitest';
import { ShellMounts } from '~/lib/browser/engine/offline/shell-mounts';

/** The offline engine's /mnt (its worker's side): what it asks for, what it removes, what it gives back. */
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const bytes = (s: string) => new TextEncoder().encode(s);
const upload = { mountPath: '/mnt/session/uploads/x.txt', version: sha('hi'), readOnly: true };
const memo = { mountPath: '/mnt/memory/notes/a.md', version: sha('A'), readOnly: false };

async function placedWith(fs: InMemoryFs, m: ShellMounts, entries: (typeof upload)[], content: Record<string, string>) {
  for (const p of await m.plan(entries)) await m.place(entries.find((e) => e.mountPath === p)!, bytes(content[p]!));
  return fs;
}

describe("the offline engine's mounts", () => {
  it('asks only for mounts it lacks at their version, and removes those no longer listed', async () => {
    const fs = new InMemoryFs();
    const m = new ShellMounts(fs);
    expect(await m.plan([upload, memo])).toEqual(['/mnt/session/uploads/x.txt', '/mnt/memory/notes/a.md']);
    await placedWith(fs, m, [upload, memo], { [upload.mountPath]: 'hi', [memo.mountPath]: 'A' });
    expect(await fs.readFile('/mnt/session/uploads/x.txt')).toBe('hi');
    expect(await m.plan([upload, memo])).toEqual([]);
    const changed = { ...upload, version: sha('hello') };
    expect(await m.plan([changed, memo])).toEqual([upload.mountPath]);
    expect(await m.plan([memo])).toEqual([]);
    expect(await fs.exists('/mnt/session/uploads/x.txt')).toBe(false);
  });

  it('gives back new and changed outputs once, and memory changed, added or deleted since placed, with what was read', async () => {
    const fs = new InMemoryFs();
    const m = new ShellMounts(fs);
    await placedWith(fs, m, [memo], { [memo.mountPath]: 'A' });
    await fs.mkdir('/mnt/session/outputs/report', { recursive: true });
    await fs.writeFile('/mnt/session/outputs/report/y.txt', 'out');
    await fs.writeFile('/mnt/memory/notes/a.md', 'A2');
    await fs.writeFile('/mnt/memory/notes/b.md', 'B');
    const first = await m.changes();
    expect(first.outputs.map((o) => [o.path, new TextDecoder().decode(o.bytes)])).toEqual([['report/y.txt', 'out']]);
    expect(first.memory).toEqual([
      { mountPath: '/mnt/memory/notes/a.md', content: 'A2', readSha256: sha('A') },
      { mountPath: '/mnt/memory/notes/b.md', content: 'B', readSha256: null },
    ]);
    // Nothing changed since: nothing again (outputs by size and mtime).
    expect(await m.changes()).toMatchObject({ outputs: [], memory: [] });
    // The store refused b.md and kept A2 as a.md: the next plan removes b.md and fetches a.md again.
    const stored = { ...memo, version: sha('A2') };
    expect(await m.plan([stored])).toEqual([memo.mountPath]);
    expect(await fs.exists('/mnt/memory/notes/b.md')).toBe(false);
    await m.place(stored, bytes('A2'));
    await fs.rm('/mnt/memory/notes/a.md');
    expect((await m.changes()).memory).toEqual([{ mountPath: '/mnt/memory/notes/a.md', content: null, readSha256: sha('A2') }]);
  });
});
