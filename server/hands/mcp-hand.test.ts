import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Hand } from '~/lib/hand';
import { connectMcpHand } from '~/server/hands/mcp-hand';
import type { ProvisionPhase } from '~/server/hands/provisioner';
import { createRemoteProvisioner } from '~/server/hands/remote-provisioner';

const FS_SERVER = path.resolve('node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const ctx = (callId = 'call-1') => ({ callId, signal: new AbortController().signal });
const provisioner = createRemoteProvisioner();

describe('mcp hand over @modelcontextprotocol/server-filesystem (stdio)', () => {
  let dir: string;
  let hand: Hand;

  beforeAll(async () => {
    // realpath: the server reports its allowed folder resolved (macOS /tmp is a symlink).
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-mcp-fs-')));
    hand = await provisioner.provision(
      'fs-1',
      { kind: 'remote', transport: 'stdio', command: process.execPath, args: [FS_SERVER, dir] },
      { signal: new AbortController().signal },
    );
  });

  afterAll(async () => {
    await hand.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('offers the five file tools and no shell', async () => {
    expect((await hand.tools()).map((t) => t.name)).toEqual(['read', 'write', 'edit', 'glob', 'grep']);
  });

  it('writes a file into a new folder, then reads it whole and as a line range', async () => {
    expect(await hand.execute('write', { file_path: 'src/notes.txt', content: 'one\ntwo\nthree\nfour' }, ctx())).toMatch(/src\/notes\.txt/);
    expect(fs.readFileSync(path.join(dir, 'src/notes.txt'), 'utf8')).toBe('one\ntwo\nthree\nfour');
    expect(await hand.execute('read', { file_path: 'src/notes.txt' }, ctx())).toBe('one\ntwo\nthree\nfour');
    expect(await hand.execute('read', { file_path: './src/notes.txt', view_range: [2, 3] }, ctx())).toBe('two\nthree');
    expect(await hand.execute('read', { file_path: 'src/notes.txt', view_range: [3, -1] }, ctx())).toBe('three\nfour');
  });

  it('edits one exact, unique occurrence and refuses text that is absent or repeated', async () => {
    await hand.execute('write', { file_path: 'e.txt', content: 'alpha beta\n  gamma\nbeta' }, ctx());
    await expect(hand.execute('edit', { file_path: 'e.txt', old_string: 'alpha', new_string: 'ALPHA' }, ctx())).resolves.toMatch(/edited e\.txt/);
    expect(fs.readFileSync(path.join(dir, 'e.txt'), 'utf8')).toBe('ALPHA beta\n  gamma\nbeta');
    // server-filesystem alone would match "gamma" ignoring indentation; the contract is exact.
    await expect(hand.execute('edit', { file_path: 'e.txt', old_string: 'gamma\nbeta\n', new_string: 'x' }, ctx())).rejects.toThrow(/not found/);
    await expect(hand.execute('edit', { file_path: 'e.txt', old_string: 'beta', new_string: 'x' }, ctx())).rejects.toThrow(/occurs 2 times in e.txt/);
    expect(fs.readFileSync(path.join(dir, 'e.txt'), 'utf8')).toBe('ALPHA beta\n  gamma\nbeta');
  });

  it('globs files relative to the workspace', async () => {
    await hand.execute('write', { file_path: 'lib/a.ts', content: 'export const a = 1;' }, ctx());
    await hand.execute('write', { file_path: 'lib/deep/b.ts', content: 'export const b = 2;' }, ctx());
    expect(await hand.execute('glob', { pattern: '**/*.ts' }, ctx())).toBe('lib/a.ts\nlib/deep/b.ts');
    expect(await hand.execute('glob', { pattern: 'lib/**' }, ctx())).toBe('lib/a.ts\nlib/deep/b.ts'); // files, not folders
    expect(await hand.execute('glob', { pattern: '*.nothing' }, ctx())).toMatch(/no files match/);
  });

  it('greps file contents as path:line: text', async () => {
    await hand.execute('write', { file_path: 'g/x.ts', content: 'const x = 1;\nlet y = 2;\nconst z = 3;' }, ctx());
    expect(await hand.execute('grep', { pattern: '^const \\w', path: 'g' }, ctx())).toBe('g/x.ts:1: const x = 1;\ng/x.ts:3: const z = 3;');
    expect(await hand.execute('grep', { pattern: 'let', path: 'g/x.ts' }, ctx())).toBe('g/x.ts:2: let y = 2;');
    await expect(hand.execute('grep', { pattern: '(' }, ctx())).rejects.toThrow(/invalid pattern/);
  });

  it('replaces every occurrence with replace_all, even when the new text contains the old', async () => {
    await hand.execute('write', { file_path: 'r.txt', content: 'a-a\na' }, ctx());
    expect(await hand.execute('edit', { file_path: 'r.txt', old_string: 'a', new_string: 'aa', replace_all: true }, ctx())).toBe('edited r.txt (3 replacements)');
    expect(fs.readFileSync(path.join(dir, 'r.txt'), 'utf8')).toBe('aa-aa\naa');
    await expect(hand.execute('edit', { file_path: 'r.txt', old_string: 'zz', new_string: 'y', replace_all: true }, ctx())).rejects.toThrow('edit: old_string not found in r.txt');
  });

  it('globs under a path inside the workspace and refuses one outside it', async () => {
    await hand.execute('write', { file_path: 'p/q/c.ts', content: '' }, ctx());
    await hand.execute('write', { file_path: 'p/d.ts', content: '' }, ctx());
    expect(await hand.execute('glob', { pattern: '**/*.ts', path: 'p' }, ctx())).toBe('p/d.ts\np/q/c.ts');
    expect(await hand.execute('glob', { pattern: '*.ts', path: 'p/q' }, ctx())).toBe('p/q/c.ts');
    await expect(hand.execute('glob', { pattern: '*', path: '../' }, ctx())).rejects.toThrow('glob: path ../ is outside the workspace');
    await expect(hand.execute('glob', { pattern: '*', path: '/etc' }, ctx())).rejects.toThrow(/outside the workspace/);
  });

  it("still takes Paddock's old input names, as calls stored before the rename carry them", async () => {
    expect(await hand.execute('write', { path: 'old.txt', content: 'one\ntwo\nthree' }, ctx())).toBe('wrote 13 bytes to old.txt');
    expect(await hand.execute('read', { path: 'old.txt', start_line: 2, end_line: 2 }, ctx())).toBe('two');
    expect(await hand.execute('edit', { path: 'old.txt', old_text: 'two', new_text: '2' }, ctx())).toBe('edited old.txt');
    expect(await hand.execute('read', { path: 'old.txt', start_line: 2 }, ctx())).toBe('2\nthree');
  });

  it('refuses bash, saying the hand has no shell and what it offers', async () => {
    await expect(hand.execute('bash', { command: 'ls' }, ctx())).rejects.toThrow(
      'hand fs-1 (secure-filesystem-server) has no shell; it offers: read, write, edit, glob, grep',
    );
  });

  it('refuses a path outside the allowed folder as a tool error and keeps working', async () => {
    await expect(hand.execute('read', { file_path: '../../etc/passwd' }, ctx())).rejects.toMatchObject({ name: 'ToolError', message: expect.stringMatching(/^read: .*outside allowed/i) as unknown });
    await expect(hand.execute('write', { file_path: '/etc/paddock-test', content: 'x' }, ctx())).rejects.toMatchObject({ name: 'ToolError' });
    await expect(hand.execute('read', { file_path: 'missing.txt' }, ctx())).rejects.toMatchObject({ name: 'ToolError' });
    expect(await hand.execute('read', { file_path: 'src/notes.txt', view_range: [1, 1] }, ctx())).toBe('one');
  });
});

describe('mcp hand loss (stdio)', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-mcp-kill-')));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('rejects a call in flight within 2 s, naming the hand, when its server process is killed, and resolves lost', async ({ annotate }) => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [FS_SERVER, dir], stderr: 'pipe' });
    const hand = await connectMcpHand({ id: 'fs-kill', kind: 'remote', transport });
    try {
      const pid = transport.pid;
      expect(pid).toBeTypeOf('number');
      // Freeze the server so the call is surely in flight when the kill lands.
      process.kill(pid!, 'SIGSTOP');
      const call = hand.execute('read', { file_path: 'x.txt' }, ctx());
      const settled = call.then(
        () => Date.now(),
        () => Date.now(),
      );
      await new Promise((r) => setTimeout(r, 100));
      const killedAt = Date.now();
      process.kill(pid!, 'SIGKILL');
      await expect(call).rejects.toThrow(/hand fs-kill was lost/);
      const ms = (await settled) - killedAt;
      await annotate(`in-flight call rejected ${ms} ms after SIGKILL`);
      expect(ms).toBeLessThan(2000);
      await expect(hand.lost).resolves.toMatch(/connection closed/);
      await expect(hand.execute('read', { file_path: 'x.txt' }, ctx())).rejects.toThrow(/hand fs-kill was lost/);
    } finally {
      await hand.close();
    }
  });

  it('does not report a hand lost when it is closed on purpose', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [FS_SERVER, dir], stderr: 'pipe' });
    const hand = await connectMcpHand({ id: 'fs-close', kind: 'remote', transport });
    await hand.close();
    await hand.close(); // idempotent
    const outcome = await Promise.race([hand.lost, new Promise((r) => setTimeout(() => r('pending'), 300))]);
    expect(outcome).toBe('pending');
    await expect(hand.execute('read', { file_path: 'x' }, ctx())).rejects.toThrow(/closed/);
  });
});

/** A tiny third-party MCP server over Streamable HTTP: `read`/`write` on a Map, bearer-checked. */
async function startMapServer(token: string) {
  const files = new Map<string, string>();
  const metas: unknown[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer((req, res) => {
    void (async () => {
      if (req.headers.authorization !== `Bearer ${token}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!transport) {
        if (sid !== undefined) {
          res.writeHead(404).end();
          return;
        }
        const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, t) });
        const server = new McpServer({ name: 'map-server', version: '1.0.0' });
        server.registerTool('read', { description: 'read', inputSchema: { path: z.string() } }, async ({ path: p }, extra) => {
          metas.push(extra._meta);
          // "slow" never answers: lets a test stop the server with a call in flight.
          if (p === 'slow') await new Promise<never>(() => undefined);
          const text = files.get(p);
          return text === undefined ? { content: [{ type: 'text', text: `no such file: ${p}` }], isError: true } : { content: [{ type: 'text', text }] };
        });
        server.registerTool('write', { description: 'write', inputSchema: { path: z.string(), content: z.string() } }, ({ path: p, content }, extra) => {
          metas.push(extra._meta);
          files.set(p, content);
          return { content: [{ type: 'text', text: `stored ${p}` }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] };
        });
        await server.connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const stop = () =>
    new Promise<void>((r) => {
      http.closeAllConnections();
      http.close(() => r());
    });
  return { url, files, metas, stop };
}

describe('mcp hand over a third-party Streamable HTTP server', () => {
  let server: Awaited<ReturnType<typeof startMapServer>>;
  const hands: Hand[] = [];
  beforeEach(async () => {
    server = await startMapServer('s3cret');
  });
  afterEach(async () => {
    await Promise.all(hands.splice(0).map((h) => h.close()));
    await server.stop();
  });

  const attach = async (token = 's3cret', phases: ProvisionPhase[] = []) => {
    const hand = await provisioner.provision(
      'http-1',
      { kind: 'remote', transport: 'http', url: server.url, token },
      { signal: new AbortController().signal, onProgress: (p) => phases.push(p) },
    );
    hands.push(hand);
    return hand;
  };

  it('passes tools the server offers by name straight through, with the call id in _meta', async () => {
    const phases: ProvisionPhase[] = [];
    const hand = await attach('s3cret', phases);
    expect(phases).toEqual(['starting', 'ready']);
    expect((await hand.tools()).map((t) => t.name)).toEqual(['read', 'write']);
    expect(await hand.execute('write', { path: 'a', content: 'hello' }, ctx('sevt_write'))).toBe('stored a\n[image image/png]');
    expect(await hand.execute('read', { path: 'a' }, ctx('sevt_read'))).toBe('hello');
    await expect(hand.execute('read', { path: 'b' }, ctx())).rejects.toMatchObject({ name: 'ToolError', message: 'no such file: b' });
    expect(server.metas.slice(0, 2)).toEqual([{ 'paddock/call_id': 'sevt_write' }, { 'paddock/call_id': 'sevt_read' }]);
    await expect(hand.execute('bash', { command: 'ls' }, ctx())).rejects.toThrow('hand http-1 (map-server) has no shell; it offers: read, write');
  });

  it('fails provisioning with a clear message when the token is wrong', async () => {
    const phases: ProvisionPhase[] = [];
    await expect(attach('wrong', phases)).rejects.toThrow(`remote hand at ${server.url} refused the token (401)`);
    expect(phases).toEqual(['starting', 'failed']);
  });

  it('fails provisioning with a clear message when nothing listens there', async () => {
    await server.stop();
    await expect(attach()).rejects.toThrow(/could not reach remote hand at http:\/\/127\.0\.0\.1:\d+\/mcp: .*ECONNREFUSED/);
  });

  it('marks the hand lost and fails the call in flight when the server stops', async ({ annotate }) => {
    const hand = await attach();
    const call = hand.execute('read', { path: 'slow' }, ctx());
    const settled = call.then(
      () => Date.now(),
      () => Date.now(),
    );
    await expect.poll(() => server.metas.length).toBe(1);
    const stoppedAt = Date.now();
    await server.stop();
    await expect(call).rejects.toThrow(/hand http-1 was lost/);
    const ms = (await settled) - stoppedAt;
    await annotate(`in-flight call rejected ${ms} ms after the server stopped; lost: ${await hand.lost}`);
    expect(ms).toBeLessThan(2000);
    await expect(hand.lost).resolves.toMatch(/ECONNREFUSED|fetch failed/);
  });
});
