import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CALL_ID_META_KEY, type HttpHand, startHttpHandServer } from '~/server/hands/paddock-hand/server';
import { eventually, running } from '~/server/hands/testing/processes';

const BIN = fileURLToPath(new URL('../../../bin/paddock-hand.mjs', import.meta.url));
const TOKEN = 'test-token-0123456789';

let workspace: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(() => {
  workspace = mkdtempSync(path.join(tmpdir(), 'paddock-hand-server-'));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  rmSync(workspace, { recursive: true, force: true });
});

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  const content = result.content as { type: string; text?: string }[];
  return content.map((c) => c.text ?? '').join('');
}

async function httpHand(): Promise<HttpHand> {
  const hand = await startHttpHandServer({ workspace, port: 0, token: TOKEN });
  cleanups.push(() => hand.close());
  return hand;
}

async function httpClient(url: string, token = TOKEN): Promise<Client> {
  const client = new Client({ name: 'paddock-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

function lines(file: string): string[] {
  try {
    return readFileSync(path.join(workspace, file), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describe('paddock-hand over stdio', () => {
  it('lists the six tools and runs write then read through the bin entry', async () => {
    const client = new Client({ name: 'paddock-test', version: '0.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, '--workspace', workspace, '--stdio'],
        cwd: tmpdir(), // the ~/ alias must resolve from anywhere
        stderr: 'pipe',
      }),
    );
    cleanups.push(() => client.close());

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['bash', 'edit', 'glob', 'grep', 'read', 'write']);
    const bash = tools.find((t) => t.name === 'bash');
    expect(bash?.inputSchema.required).toEqual(['command']);
    expect(Object.keys(bash?.inputSchema.properties ?? {})).toEqual(['command', 'timeout_ms', 'restart']);
    // The toolset's names are listed; Paddock's old ones (still accepted) never are.
    const props = (name: string) => Object.keys(tools.find((t) => t.name === name)?.inputSchema.properties ?? {});
    expect(props('read')).toEqual(['file_path', 'view_range']);
    expect(props('edit')).toEqual(['file_path', 'old_string', 'new_string', 'replace_all']);
    expect(props('glob')).toEqual(['pattern', 'path']);
    expect(tools.find((t) => t.name === 'edit')?.inputSchema.required).toEqual(['file_path', 'old_string', 'new_string']);

    const wrote = await client.callTool({ name: 'write', arguments: { file_path: 'notes/a.md', content: 'hello\nworld\n', hand: 'sandbox-1' } });
    expect(wrote.isError).toBeFalsy();
    expect(text(wrote)).toBe('wrote 12 bytes to notes/a.md');
    const read = await client.callTool({ name: 'read', arguments: { file_path: 'notes/a.md', view_range: [2, -1] } });
    expect(text(read)).toBe('world\n');
    const old = await client.callTool({ name: 'read', arguments: { path: 'notes/a.md', start_line: 1, end_line: 1 } });
    expect(text(old)).toBe('hello');
    expect(readFileSync(path.join(workspace, 'notes/a.md'), 'utf8')).toBe('hello\nworld\n');
  });
});

describe('paddock-hand over Streamable HTTP', () => {
  it('runs bash for a client holding the token', async () => {
    const hand = await httpHand();
    expect(hand.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await httpClient(hand.url);
    const result = await client.callTool({ name: 'bash', arguments: { command: 'echo hi; echo oops >&2; exit 4' } });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('hi\noops\nexit code: 4');
  });

  it('answers 401 to a missing or wrong token, and the SDK client fails to connect', async () => {
    const hand = await httpHand();
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(hand.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    expect((await post({ authorization: TOKEN })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    await expect(httpClient(hand.url, 'wrong')).rejects.toThrow();
  });

  it('returns a tool failure as an isError result, not a protocol error', async () => {
    const client = await httpClient((await httpHand()).url);
    const missing = await client.callTool({ name: 'read', arguments: { file_path: 'nope.txt' } });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toBe('read: no such file: nope.txt');
    const escape = await client.callTool({ name: 'write', arguments: { file_path: '../x', content: '' } });
    expect(escape.isError).toBe(true);
    expect(text(escape)).toBe('path ../x is outside the workspace');
    const invalid = await client.callTool({ name: 'edit', arguments: { file_path: 'a' } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/old_string/);
  });

  it('returns the first result to a retried call id without running the command again', async () => {
    const client = await httpClient((await httpHand()).url);
    const call = (id: string) =>
      client.callTool({ name: 'bash', arguments: { command: 'echo run >> runs.txt; wc -l < runs.txt' }, _meta: { [CALL_ID_META_KEY]: id } });
    const first = await call('toolu_1');
    expect(text(first)).toBe('1\nexit code: 0');
    expect(text(await call('toolu_1'))).toBe('1\nexit code: 0');
    expect(lines('runs.txt')).toHaveLength(1);
    expect(text(await call('toolu_2'))).toBe('2\nexit code: 0');
  });

  it('makes a retry of a call still running await the first run, across sessions', async () => {
    const hand = await httpHand();
    const [a, b] = [await httpClient(hand.url), await httpClient(hand.url)];
    const meta = { [CALL_ID_META_KEY]: 'toolu_slow' };
    const args = { command: 'echo run >> runs.txt; sleep 0.5; wc -l < runs.txt' };
    const first = a.callTool({ name: 'bash', arguments: args, _meta: meta });
    await new Promise((r) => setTimeout(r, 150));
    const retry = b.callTool({ name: 'bash', arguments: args, _meta: meta });
    expect(text(await retry)).toBe('1\nexit code: 0');
    expect(text(await first)).toBe('1\nexit code: 0');
    expect(lines('runs.txt')).toHaveLength(1);
  });

  it('keeps a vanished client’s running call for a retry by call id, and closes sessions only once idle', async () => {
    const hand = await startHttpHandServer({ workspace, port: 0, token: TOKEN, sessionIdleMs: 200 });
    cleanups.push(() => hand.close());
    const vanishing = new Client({ name: 'paddock-test', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(hand.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    await vanishing.connect(transport);
    const orphanSession = transport.sessionId!;
    const meta = { [CALL_ID_META_KEY]: 'toolu_orphan' };
    const args = { command: 'echo run >> runs.txt; sleep 1; echo done' };
    const first = vanishing.callTool({ name: 'bash', arguments: args, _meta: meta }).catch((e: unknown) => e);
    expect(await eventually(() => lines('runs.txt').length === 1)).toBe(true);
    // The client goes away without cancelling or ending its session, as a crashed harness does.
    await vanishing.close();
    expect(await first).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 500)); // well past the idle limit, while the call runs
    const retry = await (await httpClient(hand.url)).callTool({ name: 'bash', arguments: args, _meta: meta });
    expect(text(retry)).toBe('done\nexit code: 0');
    expect(lines('runs.txt')).toHaveLength(1);
    // Now the orphaned session is idle: it is closed.
    const probe = () =>
      fetch(hand.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': orphanSession, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
      }).then((r) => r.status);
    // (A probe is itself a request that keeps a session alive, so look once, after a quiet spell.)
    await new Promise((r) => setTimeout(r, 700));
    expect(await probe()).toBe(404);
  });

  it('kills a running bash call when the client cancels it', async () => {
    const client = await httpClient((await httpHand()).url);
    const ac = new AbortController();
    const call = client.callTool(
      { name: 'bash', arguments: { command: 'sleep 30 & echo $! > bg.pid; wait' } },
      undefined,
      { signal: ac.signal },
    );
    expect(await eventually(() => lines('bg.pid').length === 1)).toBe(true);
    const pid = Number(lines('bg.pid')[0]);
    expect(running(pid)).toBe(true);
    ac.abort();
    await expect(call).rejects.toThrow();
    expect(await eventually(() => !running(pid))).toBe(true);
  });
});
