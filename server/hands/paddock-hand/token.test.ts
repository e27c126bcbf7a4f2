/**
 * A remote paddock-hand's bearer token, once the hand runs, is nowhere its own commands can read
 * it: not in their environment, nor in the /proc environ, command line or open files of any
 * process above them.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';

const SH_ENTRY = path.resolve('bin/paddock-hand');

/**
 * Every environ, command line and fd 3 (where bin/paddock-hand hands the token over) of the
 * command's ancestors up to this test process, then its own environment.
 */
const probeScript = (stopAt: number) => `
p=$$
while [ "$p" -gt 1 ] && [ "$p" -ne ${stopAt} ]; do
  echo "== $p"
  tr '\\0' '\\n' < /proc/$p/environ 2>&1
  tr '\\0' ' ' < /proc/$p/cmdline 2>&1; echo
  [ -e /proc/$p/fd/3 ] && timeout 1 cat /proc/$p/fd/3 < /dev/null 2>&1
  p=$(awk '{print $4}' /proc/$p/stat)
done
echo "== env"; env
echo PROBE_DONE`;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Starts paddock-hand in HTTP mode and runs the probe through its bash tool. */
async function probe(command: string, args: string[], env: Record<string, string>, token: string): Promise<string> {
  const workspace = mkdtempSync(path.join(tmpdir(), 'paddock-token-'));
  cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
  const child = spawn(command, [...args, '--workspace', workspace, '--http', '0'], {
    env: { PATH: process.env.PATH ?? '', HOME: workspace, ...env } as Record<string, string> as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => child.kill('SIGKILL'));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /\{"listening":"([^"]+)"\}/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`paddock-hand exited with ${code}`)));
  });
  const client = new Client({ name: 'token-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  cleanups.push(() => client.close());
  const result = await client.callTool({ name: 'bash', arguments: { command: probeScript(process.pid) } });
  return (result.content as { text?: string }[]).map((c) => c.text ?? '').join('');
}

describe('the token of a remote paddock-hand', () => {
  it('is not readable by its own commands when given in PADDOCK_HAND_TOKEN', async () => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const out = await probe(SH_ENTRY, [], { PADDOCK_HAND_TOKEN: token }, token);
    expect(out).toContain('PROBE_DONE');
    expect(out).toContain('paddock-hand.mjs'); // the walk did pass the hand itself
    expect(out).not.toContain(token);
  }, 30_000);

  it('is not readable by its own commands when given in a token file, which is deleted', async () => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const dir = mkdtempSync(path.join(tmpdir(), 'paddock-token-file-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'token');
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    const out = await probe(SH_ENTRY, ['--token-file', file], {}, token);
    expect(out).toContain('PROBE_DONE');
    expect(out).not.toContain(token);
    expect(existsSync(file)).toBe(false);
  }, 30_000);
});
