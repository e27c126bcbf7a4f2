/**
 * A sandbox hand's mounts, proven from inside: the uploads folder is readable at its mount path and
 * refuses writes, the outputs folder takes them (and the host sees them), and /mnt shows nothing else.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindArgs } from '~/server/hands/sandbox/mount-binds';
import { sandboxPolicy } from '~/server/hands/sandbox/policy';
import { checkSandboxAvailable, spawnSandboxed } from '~/server/hands/sandbox/spawn-sandboxed';

let root: string;

beforeAll(async () => {
  const available = await checkSandboxAvailable();
  if (!available.ok) throw new Error(`the sandbox cannot run on this machine: ${available.missing}`);
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-mounts-test-'));
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

async function run(script: string, mounts: Parameters<typeof sandboxPolicy>[0]['mounts']): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const workspace = path.join(root, 'data', 'hands', 'h1', 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  const policy = sandboxPolicy({ workspace, tmpDir: path.join(root, 'hand-tmp'), dataDir: path.join(root, 'data'), ...(mounts ? { mounts } : {}) });
  const p = spawnSandboxed({ policy, command: ['/bin/bash', '-c', script] });
  let stdout = '';
  let stderr = '';
  p.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  p.child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    const code = await new Promise<number | null>((resolve) => p.child.once('close', resolve));
    return { stdout, stderr, code };
  } finally {
    await p.kill();
  }
}

describe('sandbox mounts', () => {
  it('turns mounts into bwrap binds, read-only or not, in order', () => {
    expect(bindArgs([{ source: '/h/up', target: '/mnt/session/uploads', readOnly: true }, { source: '/h/out', target: '/mnt/session/outputs', readOnly: false }])).toEqual(['--ro-bind', '/h/up', '/mnt/session/uploads', '--bind', '/h/out', '/mnt/session/outputs']);
  });

  it('binds the uploads read-only and the outputs writable at their paths under the hidden /mnt', { timeout: 60_000 }, async () => {
    const up = path.join(root, 'hand', 'mnt', 'session', 'uploads');
    const out = path.join(root, 'hand', 'mnt', 'session', 'outputs');
    fs.mkdirSync(path.join(up, 'data'), { recursive: true });
    fs.writeFileSync(path.join(up, 'data', 'a.csv'), 'x,y\n1,2\n');
    const r = await run(
      'cat /mnt/session/uploads/data/a.csv; { echo more > /mnt/session/uploads/b; } 2>/dev/null && echo WROTE-UPLOADS; echo result > /mnt/session/outputs/r.txt && echo WROTE-OUTPUTS; ls -A /mnt; ls -A /mnt/session',
      [
        { source: up, target: '/mnt/session/uploads', readOnly: true },
        { source: out, target: '/mnt/session/outputs', readOnly: false },
      ],
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('x,y\n1,2\nWROTE-OUTPUTS\nsession\noutputs\nuploads\n');
    expect(fs.readFileSync(path.join(out, 'r.txt'), 'utf8')).toBe('result\n');
    expect(fs.existsSync(path.join(up, 'b'))).toBe(false);
  });

  it('without mounts, /mnt stays an empty hidden folder', { timeout: 60_000 }, async () => {
    const r = await run('ls -A /mnt | wc -l', undefined);
    expect(r.stdout.trim()).toBe('0');
  });
});
