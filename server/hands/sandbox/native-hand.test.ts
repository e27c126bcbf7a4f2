/**
 * A sandbox hand on the native executor (PADDOCK_HAND_EXECUTOR=native): no Node in its sandbox,
 * the tools served by the shared launcher and every file operation done inside the sandbox.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { cmdline, descendants } from '~/server/hands/testing/processes';

const SECRET = `S3CR3T-${randomBytes(8).toString('hex')}`;
let root: string;
let hostFile: string;
let hand: Hand;
let calls = 0;
const run = (name: string, input: Record<string, unknown>) => hand.execute(name, input, { callId: `n-${++calls}`, signal: new AbortController().signal });

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-native-hand-'));
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(dataDir);
  hostFile = path.join(dataDir, 'host-secret.txt');
  fs.writeFileSync(hostFile, SECRET);
  const provisioner = createLocalHandProvisioner({ dataDir, workspacesDir: path.join(root, 'ws'), executor: 'native' });
  hand = await provisioner.provision('native-a', { kind: 'sandbox' }, { signal: new AbortController().signal });
}, 120_000);

afterAll(async () => {
  await hand?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('a hand on the native executor', () => {
  it('runs the executor in its sandbox, and no Node process of its own', () => {
    const tree = descendants(process.pid).map(cmdline);
    expect(tree.some((c) => /paddock-exec-[0-9a-f]{16}/.test(c))).toBe(true);
    expect(tree.filter((c) => c.includes('--snapshot-blob'))).toEqual([]);
  });

  it('answers the six tools as paddock-hand does', async () => {
    expect(await run('write', { file_path: 'src/a.txt', content: 'one\ntwo\n' })).toBe('wrote 8 bytes to src/a.txt');
    expect(await run('edit', { file_path: 'src/a.txt', old_string: 'two', new_string: 'three' })).toBe('edited src/a.txt');
    expect(await run('read', { file_path: 'src/a.txt' })).toBe('one\nthree\n');
    expect(await run('glob', { pattern: '**/*.txt' })).toBe('src/a.txt');
    expect(await run('grep', { pattern: 'thr' })).toBe('src/a.txt:2: three');
    expect(await run('bash', { command: 'cat src/a.txt; exit 4' })).toBe('one\nthree\nexit code: 4');
    expect(await run('bash', { command: 'sleep 30', timeout_ms: 300 })).toBe('killed by SIGKILL after timeout of 300 ms');
  });

  it('never reads or writes a host file through a link the agent planted', async () => {
    const newHostFile = path.join(path.dirname(hostFile), 'planted.txt');
    await run('bash', { command: `ln -s ${hostFile} link && ln -s ${newHostFile} out && mkdir d && ln -s ${path.dirname(hostFile)} d/data` });
    for (const [name, input] of [
      ['read', { file_path: 'link' }],
      ['read', { file_path: 'd/data/host-secret.txt' }],
      ['edit', { file_path: 'link', old_string: 'S3CR3T', new_string: 'x' }],
      ['write', { file_path: 'out', content: 'planted' }],
      ['write', { file_path: 'd/data/planted.txt', content: 'planted' }],
    ] as const) {
      const answer = await run(name, input).catch((e: unknown) => (e as Error).message);
      expect(answer, `${name} ${JSON.stringify(input)}`).not.toContain(SECRET);
      expect(answer).toMatch(/outside the workspace/);
    }
    expect(await run('grep', { pattern: 'S3CR3T' })).toBe('no matches for S3CR3T');
    expect(fs.existsSync(newHostFile)).toBe(false);
    expect(fs.readFileSync(hostFile, 'utf8')).toBe(SECRET);
  });
});
