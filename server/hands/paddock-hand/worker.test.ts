import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { plainWorkerHands } from '~/server/hands/paddock-hand/worker';

const bin = fileURLToPath(new URL('../../../bin/paddock-hand', import.meta.url));

describe('paddock-hand worker', () => {
  it("runs an unsandboxed session's tools on a folder of its own under the root, named by its id alone", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-worker-plain-'));
    const hands = plainWorkerHands(root);
    try {
      const run = hands.runnerFor('sesn_a/../x');
      expect(await run('write', { file_path: 'a.txt', content: 'hi' })).toMatch(/^wrote 2 bytes/);
      expect(fs.readFileSync(path.join(root, 'sesn_a____x', 'a.txt'), 'utf8')).toBe('hi');
      expect(fs.readdirSync(root)).toEqual(['sesn_a____x']);
    } finally {
      await hands.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses a network it does not know, naming the flag, before it polls', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-worker-cli-'));
    fs.writeFileSync(path.join(dir, 'k'), 'pdek_test');
    const r = spawnSync(bin, ['worker', '--environment', 'env_x', '--url', 'http://127.0.0.1:9', '--key-file', path.join(dir, 'k'), '--network', 'some'], { encoding: 'utf8', timeout: 30_000 });
    fs.rmSync(dir, { recursive: true, force: true });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--network is none or unrestricted, not some');
  });

  it('says how to start it when started without the server modules’ conditions', () => {
    const r = spawnSync(process.execPath, [fileURLToPath(new URL('../../../bin/paddock-hand.mjs', import.meta.url)), 'worker', '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('start it as bin/paddock-hand worker');
  });
});
