import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * `npm start` as an operator runs it (`node scripts/start.mjs`), with one mistake each: it must
 * stop with a non-zero code and ONE line on stderr naming the mistake, before building or binding
 * the port (a stuck or listening start is killed at the deadline and fails the test).
 */
const root = path.resolve(import.meta.dirname, '..');
const EXIT_WITHIN_MS = 15_000;

let dir: string;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Whether the start's port answered a connection while it ran. */
  listened: boolean;
}

/** Runs the start path; `watchPort` is polled while it runs (null: the port is someone else's). */
async function start(env: Record<string, string>, watchPort: number | null): Promise<Run> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-start-'));
  const child: ChildProcess = spawn(process.execPath, ['scripts/start.mjs'], {
    cwd: root,
    env: { NODE_ENV: 'production', PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, PADDOCK_DATA_DIR: path.join(dir, 'data'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so a start that hangs is killed with whatever it spawned (a build, Next).
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  const exit = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      exited = true;
      resolve(code);
    }),
  );
  let listened = false;
  const deadline = Date.now() + EXIT_WITHIN_MS;
  while (!exited && Date.now() < deadline) {
    if (watchPort !== null && (await connects(watchPort))) listened = true;
    await Promise.race([exit, new Promise((r) => setTimeout(r, 50))]);
  }
  if (!exited && child.pid) process.kill(-child.pid, 'SIGKILL');
  const code = exited ? await exit : -1;
  return { code, stdout, stderr, listened };
}

const lines = (s: string) => s.split('\n').filter((l) => l.trim() !== '');

describe('npm start', () => {
  it('stops before listening with one line naming PADDOCK_API_KEY and its rule when the key is too short', async () => {
    const port = await freePort();
    const run = await start({ PORT: String(port), PADDOCK_API_KEY: 'short-key' }, port);
    expect(run.listened).toBe(false);
    expect(run.code, run.stderr).not.toBe(0);
    expect(run.code).not.toBe(-1);
    expect(lines(run.stderr)).toEqual(['paddock: invalid setting: PADDOCK_API_KEY: must be at least 16 characters']);
    expect(run.stderr).not.toContain('short-key');
    expect(run.stdout).not.toContain('Ready');
  });

  it('names a mistyped PORT instead of handing it to Next', async () => {
    const run = await start({ PORT: '30o0' }, null);
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBe(-1);
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^paddock: invalid setting: PORT: must be a whole number/)]);
  });

  it('says a port in use is taken by another program and how to pick another with PORT=', async () => {
    const other = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => other.close(() => r())));
    const port = (other.address() as net.AddressInfo).port;
    const run = await start({ PORT: String(port) }, null);
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBe(-1);
    expect(lines(run.stderr)).toEqual([`paddock: port ${port} on 127.0.0.1 is in use by another program: start Paddock on another port with PORT=${port + 1} npm start`]);
    expect(run.stderr).not.toContain('EADDRINUSE');
  });

  it('says Paddock is already running when the port in use answers as Paddock', async () => {
    // A stand-in for a running Paddock: its /healthz names the service.
    const paddock = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url === '/healthz' ? { service: 'paddock', status: 'ok' } : {}));
    });
    await new Promise<void>((r) => paddock.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => paddock.close(() => r())));
    const port = (paddock.address() as net.AddressInfo).port;
    const run = await start({ PORT: String(port) }, null);
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBe(-1);
    expect(lines(run.stderr)).toEqual([expect.stringContaining(`port ${port} is in use: Paddock is already running at http://127.0.0.1:${port}`)]);
    expect(run.stderr).toContain(`PORT=${port + 1}`);
  });

  it('names PADDOCK_DATA_DIR when the data dir cannot be made', async () => {
    const run = await start({ PADDOCK_DATA_DIR: '/etc/hostname/paddock' }, null);
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBe(-1);
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^paddock: PADDOCK_DATA_DIR \/etc\/hostname\/paddock cannot be written \(ENOTDIR\)/)]);
  });
});
