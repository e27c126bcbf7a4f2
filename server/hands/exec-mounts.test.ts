import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import type { Mount } from '~/lib/mounts';
import { withMounts } from '~/server/hands/hand-mounts';
import { createHash } from 'node:crypto';
import type { MemoryChange, OutputFile, SessionMounts } from '~/server/hands/mount-port';
import { createRemoteProvisioner } from '~/server/hands/remote-provisioner';

/**
 * A remote paddock-hand (here over stdio, as a hand on another machine would be over HTTP) gets the
 * session's files through its own bash tool before a call, and gives its outputs back after it.
 * `/mnt` is a folder of the test's, so nothing is written to this machine's /mnt.
 */
const PADDOCK_HAND = path.resolve('bin/paddock-hand.mjs');
let dir: string;
let hand: Hand;
const ctx = () => ({ callId: `c-${Math.random()}`, signal: new AbortController().signal });

beforeEach(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-exec-mounts-')));
  fs.mkdirSync(path.join(dir, 'workspace'));
  const provisioner = createRemoteProvisioner({ mountsRoot: path.join(dir, 'mnt') });
  hand = await provisioner.provision('remote-1', { kind: 'remote', transport: 'stdio', command: process.execPath, args: [PADDOCK_HAND, '--workspace', path.join(dir, 'workspace'), '--stdio'] }, { signal: new AbortController().signal });
});

afterEach(async () => {
  await hand.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function session(mounts: Mount[], refuse: string[] = []): SessionMounts & { kept: Map<string, Buffer>; memory: MemoryChange[] } {
  const kept = new Map<string, Buffer>();
  const memory: MemoryChange[] = [];
  return {
    kept,
    memory,
    mountsFor: () => Promise.resolve(mounts),
    saveMemory: (_id: string, changes: readonly MemoryChange[]) => {
      memory.push(...changes);
      return Promise.resolve(refuse);
    },
    async saveOutputs(_id: string, files: readonly OutputFile[]) {
      for (const f of files) {
        const chunks: Buffer[] = [];
        for await (const c of await f.open()) chunks.push(c as Buffer);
        kept.set(f.path, Buffer.concat(chunks));
      }
    },
  };
}

describe('mounts in a remote paddock-hand', () => {
  it('copies a file in before the call, byte for byte and read-only, and brings an output back', { timeout: 60_000 }, async () => {
    const big = randomBytes(130 * 1024);
    const mounts: Mount[] = [{ mountPath: '/mnt/session/uploads/data/big.bin', readOnly: true, version: 'v1', source: { open: () => Promise.resolve(Readable.from([big.subarray(0, 70_000), big.subarray(70_000)])) } }];
    const s = session(mounts);
    const out = randomBytes(40_000);
    fs.writeFileSync(path.join(dir, 'out.bin'), out);
    const text = await withMounts(s, 'sesn_x', 'remote-1', hand, (h) => h.execute('bash', { command: `sha256sum ${dir}/mnt/session/uploads/data/big.bin && cp ${dir}/out.bin ${dir}/mnt/session/outputs/result.bin` }, ctx()));
    const placed = path.join(dir, 'mnt', 'session', 'uploads', 'data', 'big.bin');
    expect(fs.readFileSync(placed).equals(big)).toBe(true);
    expect(fs.statSync(placed).mode & 0o777).toBe(0o444);
    expect(text).toContain('exit code: 0');
    expect([...s.kept.keys()]).toEqual(['result.bin']);
    expect(s.kept.get('result.bin')!.equals(out)).toBe(true);

    // Taken away from the session: gone before the next call; an unchanged output is not read again.
    s.kept.clear();
    mounts.length = 0;
    await withMounts(s, 'sesn_x', 'remote-1', hand, (h) => h.execute('bash', { command: 'true' }, ctx()));
    expect(fs.existsSync(placed)).toBe(false);
    expect(s.kept.size).toBe(0);
  });
});

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const memoryMount = (p: string, text: string, readOnly = false): Mount => ({ mountPath: `/mnt/memory/${p}`, readOnly, version: sha256(text), source: { contents: text } });

describe('memory stores in a remote paddock-hand', () => {
  it('gives back what the agent changed, added and deleted under /mnt/memory, each with what it was given there', { timeout: 60_000 }, async () => {
    const mounts = [memoryMount('notes/a.md', 'A\n'), memoryMount('notes/b.md', 'B\n'), memoryMount('notes/same.md', 'S\n'), memoryMount('rules/r.md', 'R\n', true)];
    const s = session(mounts);
    const mem = `${dir}/mnt/memory`;
    await withMounts(s, 'sesn_x', 'remote-1', hand, (h) => h.execute('bash', { command: `echo A2 > ${mem}/notes/a.md && rm ${mem}/notes/b.md && mkdir -p ${mem}/notes/new && printf 'N' > ${mem}/notes/new/c.md` }, ctx()));
    expect(fs.statSync(`${mem}/notes/same.md`).mode & 0o777).toBe(0o644);
    expect(fs.statSync(`${mem}/rules/r.md`).mode & 0o777).toBe(0o444);
    const byPath = Object.fromEntries(s.memory.map((c) => [c.mountPath, c]));
    expect(Object.keys(byPath).sort()).toEqual(['/mnt/memory/notes/a.md', '/mnt/memory/notes/b.md', '/mnt/memory/notes/new/c.md']);
    expect(byPath['/mnt/memory/notes/a.md']).toEqual({ mountPath: '/mnt/memory/notes/a.md', content: 'A2\n', readSha256: sha256('A\n') });
    expect(byPath['/mnt/memory/notes/b.md']).toEqual({ mountPath: '/mnt/memory/notes/b.md', content: null, readSha256: sha256('B\n') });
    expect(byPath['/mnt/memory/notes/new/c.md']).toEqual({ mountPath: '/mnt/memory/notes/new/c.md', content: 'N', readSha256: null });

    // Nothing changed: nothing given back.
    s.memory.length = 0;
    await withMounts(s, 'sesn_x', 'remote-1', hand, (h) => h.execute('bash', { command: 'true' }, ctx()));
    expect(s.memory).toEqual([]);
  });

  it('fails the call when a change was refused, and puts the store’s version back before the next call', { timeout: 60_000 }, async () => {
    const mounts = [memoryMount('rules/r.md', 'R\n', true)];
    const s = session(mounts, ['/mnt/memory/rules/r.md: memory store rules is mounted read-only']);
    const file = `${dir}/mnt/memory/rules/r.md`;
    const call = withMounts(s, 'sesn_x', 'remote-1', hand, (h) => h.execute('bash', { command: `chmod 644 ${file} && echo changed > ${file} && echo DONE` }, ctx()));
    await expect(call).rejects.toThrow(/DONE[\s\S]*changes to memory were not saved:\n- \/mnt\/memory\/rules\/r\.md: memory store rules is mounted read-only/);
    await withMounts(session(mounts), 'sesn_x', 'remote-1', hand, (h) => h.execute('bash', { command: 'true' }, ctx()));
    expect(fs.readFileSync(file, 'utf8')).toBe('R\n');
  });
});
