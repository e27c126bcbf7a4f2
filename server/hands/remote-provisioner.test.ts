import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import type { ProvisionPhase } from '~/server/hands/provisioner';
import { createRemoteProvisioner } from '~/server/hands/remote-provisioner';

const PADDOCK_HAND = path.resolve('bin/paddock-hand.mjs');
const ctx = { callId: 'call-1', signal: new AbortController().signal };
const provisioner = createRemoteProvisioner();

/** A stdio MCP server whose `read` tool reports the environment and folder it runs in. */
function writeEnvServer(dir: string): string {
  const sdk = (p: string) => pathToFileURL(path.resolve('node_modules/@modelcontextprotocol/sdk/dist/esm', p)).href;
  const file = path.join(dir, 'env-server.mjs');
  fs.writeFileSync(
    file,
    `import { McpServer } from '${sdk('server/mcp.js')}';
import { StdioServerTransport } from '${sdk('server/stdio.js')}';
const server = new McpServer({ name: 'env-server', version: '1.0.0' });
server.registerTool('read', { description: 'env' }, () => ({
  content: [{ type: 'text', text: JSON.stringify({ cwd: process.cwd(), env: Object.keys(process.env) }) }],
}));
await server.connect(new StdioServerTransport());
`,
  );
  return file;
}

describe('remote provisioner', () => {
  let dir: string;
  const hands: Hand[] = [];
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-remote-')));
  });
  afterEach(async () => {
    await Promise.all(hands.splice(0).map((h) => h.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts a stdio hand in its folder with a minimal environment, never the server’s', async () => {
    process.env.PADDOCK_TEST_SECRET = 'must-not-leak';
    try {
      const progress: string[] = [];
      const hand = await provisioner.provision(
        'stdio-1',
        { kind: 'remote', transport: 'stdio', command: process.execPath, args: [writeEnvServer(dir)], cwd: dir },
        { signal: new AbortController().signal, onProgress: (p, d) => progress.push(d ? `${p}: ${d}` : p) },
      );
      hands.push(hand);
      expect(progress).toEqual([`starting: starting ${process.execPath} ${path.join(dir, 'env-server.mjs')}`, 'ready']);
      const seen = JSON.parse(await hand.execute('read', {}, ctx)) as { cwd: string; env: string[] };
      expect(seen.cwd).toBe(dir);
      expect(seen.env).toContain('PATH');
      expect(seen.env).not.toContain('PADDOCK_TEST_SECRET');
      expect(seen.env.every((k) => ['PATH', 'HOME', 'LANG', 'LOGNAME', 'SHELL', 'TERM', 'USER'].includes(k))).toBe(true);
    } finally {
      delete process.env.PADDOCK_TEST_SECRET;
    }
  });

  it('fails with the command line and its last stderr lines when the process exits before the handshake', async () => {
    const phases: ProvisionPhase[] = [];
    const attempt = provisioner.provision(
      'stdio-2',
      { kind: 'remote', transport: 'stdio', command: process.execPath, args: ['-e', 'console.error("no config found"); process.exit(3)'] },
      { signal: new AbortController().signal, onProgress: (p) => phases.push(p) },
    );
    await expect(attempt).rejects.toThrow(/^command exited before the MCP handshake: .*process\.exit\(3\)\nno config found$/);
    expect(phases).toEqual(['starting', 'failed']);
  });

  it('fails clearly when the command cannot be started', async () => {
    await expect(
      provisioner.provision('stdio-3', { kind: 'remote', transport: 'stdio', command: path.join(dir, 'no-such-binary') }, { signal: new AbortController().signal }),
    ).rejects.toThrow(/^could not start .*no-such-binary: .*ENOENT/);
  });

  it('refuses a bad url and a spec of another kind', async () => {
    const signal = new AbortController().signal;
    await expect(provisioner.provision('h', { kind: 'remote', transport: 'http', url: 'not a url' }, { signal })).rejects.toThrow(/not a valid URL/);
    await expect(provisioner.provision('h', { kind: 'memory' }, { signal })).rejects.toThrow(/cannot make a memory hand/);
  });

  it('gives up at once when provisioning is cancelled', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(
      provisioner.provision('h', { kind: 'remote', transport: 'stdio', command: process.execPath, args: [writeEnvServer(dir)] }, { signal: ac.signal }),
    ).rejects.toThrow(/provisioning hand h was cancelled/);
  });
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('remote provisioner with paddock-hand over HTTP', () => {
  let dir: string;
  let child: ChildProcess | undefined;
  let hand: Hand | undefined;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-remote-ph-')));
  });
  afterEach(async () => {
    await hand?.close();
    hand = undefined;
    // detached: the hand is its own process group; kill it and anything it started.
    if (child?.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    child = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!fs.existsSync(PADDOCK_HAND))('attaches paddock-hand by url and token and runs bash in its workspace', async () => {
    const port = await freePort();
    const token = 'tok-' + Math.random().toString(36).slice(2);
    // Next's types make NODE_ENV required on ProcessEnv; a hand gets no more than this.
    const env = { PATH: process.env.PATH ?? '', HOME: dir, PADDOCK_HAND_TOKEN: token } as Record<string, string> as NodeJS.ProcessEnv;
    const proc = spawn(process.execPath, [PADDOCK_HAND, '--workspace', dir, '--http', String(port)], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    child = proc;
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // paddock-hand prints {"listening":URL} once it accepts connections.
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      proc.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { listening: string }).listening);
      });
      proc.once('exit', (code) => reject(new Error(`paddock-hand exited ${code}: ${stderr}`)));
    });
    expect(url).toBe(`http://127.0.0.1:${port}/mcp`);

    await expect(
      provisioner.provision('ph-bad', { kind: 'remote', transport: 'http', url, token: 'wrong' }, { signal: new AbortController().signal }),
    ).rejects.toThrow(`remote hand at ${url} refused the token (401)`);

    hand = await provisioner.provision('ph-1', { kind: 'remote', transport: 'http', url, token }, { signal: new AbortController().signal });
    expect((await hand.tools()).map((t) => t.name)).toEqual(['bash', 'read', 'write', 'edit', 'glob', 'grep']);
    const out = await hand.execute('bash', { command: 'echo hi' }, ctx);
    expect(out).toContain('hi');
    expect(out).toContain('exit code: 0');
    // A new call id: paddock-hand answers a repeated id from its cache (retries run once).
    await hand.execute('write', { file_path: 'a.txt', content: 'from the brain' }, { ...ctx, callId: 'call-2' });
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('from the brain');
  });
});
