import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import type { Mount } from '~/lib/mounts';
import { withMounts } from '~/server/hands/hand-mounts';
import type { OutputFile, SessionMounts } from '~/server/hands/mount-port';
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

function session(mounts: Mount[]): SessionMounts & { kept: Map<string, Buffer> } {
  const kept = new Map<string, Buffer>();
  return {
    kept,
    mountsFor: () => Promise.resolve(mounts),
    saveMemory: () => Promise.resolve([]),
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
