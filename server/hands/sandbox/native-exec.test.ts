import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoCompilerError, buildNativeExec } from '~/server/hands/sandbox/native-exec-build';
import { ExecClient } from '~/server/hands/sandbox/native-exec-client';
import { NativeWorkspace } from '~/server/hands/sandbox/native-workspace';

// The resident executor on its own (no sandbox): its wire, its commands' ends, its process groups.
let binary = '';
const dirs: string[] = [];
const children: ChildProcess[] = [];
beforeAll(async () => {
  binary = await buildNativeExec();
});
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function start(env: Record<string, string> = {}) {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'paddock-exec-')));
  dirs.push(root);
  const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'], env: { PATH: '/usr/bin:/bin', ...env } as unknown as NodeJS.ProcessEnv }); // a cast: Next's types make NODE_ENV required
  children.push(child);
  const exec = new ExecClient(child.stdin, child.stdout);
  return { root, child, exec, ws: new NativeWorkspace(exec, root, { defaultTimeoutMs: 5_000 }) };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const waitFor = async (check: () => boolean, ms = 5_000) => {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  return check();
};

describe('the native hand executor', () => {
  it('says hello with its pid, then answers file requests with errno codes Node would give', async () => {
    const { root, exec, child } = start();
    expect(await exec.hello).toBe(child.pid);
    await exec.write(`${root}/a/b/c.txt`, Buffer.from('hello\0world'));
    expect(await exec.stat(`${root}/a/b`, true)).toEqual({ kind: 'dir', size: expect.any(Number) as number });
    expect((await exec.read(`${root}/a/b/c.txt`)).toString('latin1')).toBe('hello\0world');
    expect((await exec.read(`${root}/a/b/c.txt`, 6, 3)).toString()).toBe('wor');
    await expect(exec.read(`${root}/nope`)).rejects.toMatchObject({ code: 'ENOENT', message: `ENOENT: no such file or directory, open '${root}/nope'` });
    await expect(exec.read(`${root}/a`)).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(exec.write(`${root}/a/b/c.txt/d`, Buffer.from(''))).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect((await exec.readdir(root)).map((e) => `${e.kind}:${e.name}`)).toEqual(['dir:a']);
  });

  it('moves files of megabytes both ways whole', async () => {
    const { root, exec } = start();
    const big = Buffer.alloc(9 * 1024 * 1024 + 7, 'abcdefgh');
    await exec.write(`${root}/big`, big);
    expect((await exec.read(`${root}/big`)).equals(big)).toBe(true);
    expect((await exec.stat(`${root}/big`, true)).size).toBe(big.length);
  });

  it('runs bash with only the environment it is given, and gives the exit code and both streams', async () => {
    const { ws, root } = start({ SECRET_TOKEN: 'x', HTTPS_PROXY: 'http://proxy:1' });
    expect(await ws.bash({ command: 'echo out; pwd; echo "${SECRET_TOKEN:-none} $HTTPS_PROXY"; exit 3' })).toBe(`out\n${root}\nnone http://proxy:1\nexit code: 3`);
    expect(await ws.bash({ command: 'echo err >&2' })).toBe('err\nexit code: 0');
    expect(await ws.bash({ command: 'kill -SEGV $$' })).toBe('killed by SIGSEGV');
  });

  it('kills the whole process group on timeout, background children too', async () => {
    const { ws, root } = start();
    const out = await ws.bash({ command: `sleep 30 & echo $! > ${root}/bg; sleep 30`, timeout_ms: 300 });
    expect(out).toBe('killed by SIGKILL after timeout of 300 ms');
    const bg = Number(readFileSync(`${root}/bg`, 'utf8'));
    expect(await waitFor(() => !alive(bg))).toBe(true);
  });

  it('kills a cancelled command, and answers other requests while one runs', async () => {
    const { ws, exec, root } = start();
    const ac = new AbortController();
    const running = ws.bash({ command: 'sleep 30' }, ac.signal);
    await exec.write(`${root}/x`, Buffer.from('1'));
    expect((await exec.read(`${root}/x`)).toString()).toBe('1');
    ac.abort();
    expect(await running).toBe('cancelled: killed by SIGKILL');
  });

  it("kills every group it started when its input ends, then exits (nothing outlives the hand)", async () => {
    const { ws, exec, root, child } = start();
    expect(await ws.bash({ command: `(setsid sleep 30 & echo $! > ${root}/bg2); sleep 30 & echo $! > ${root}/bg` })).toBe('exit code: 0');
    const bg = Number(readFileSync(`${root}/bg`, 'utf8'));
    expect(alive(bg)).toBe(true);
    const exited = new Promise((r) => child.once('exit', r));
    exec.close();
    await exited;
    expect(await waitFor(() => !alive(bg))).toBe(true);
    process.kill(Number(readFileSync(`${root}/bg2`, 'utf8')), 'SIGKILL'); // a new session escapes the group (the sandbox's pid namespace ends it)
  });

  it('follows links where it runs, and reads a dangling one as a link', async () => {
    const { exec, root } = start();
    const host = path.join(dirs[0]!, 'host-secret');
    writeFileSync(host, 'secret');
    symlinkSync(host, `${root}/link`);
    symlinkSync('/nonexistent/x', `${root}/dangling`);
    expect(await exec.realpath(`${root}/link`)).toBe(host);
    expect(await exec.readlink(`${root}/dangling`)).toBe('/nonexistent/x');
    expect((await exec.stat(`${root}/dangling`, false)).kind).toBe('symlink');
    await expect(exec.stat(`${root}/dangling`, true)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('is built once per source, and says when there is no C compiler (hands then run paddock-hand)', async () => {
    expect(await buildNativeExec()).toBe(binary);
    expect(path.basename(binary)).toMatch(/^paddock-exec-[0-9a-f]{16}$/);
    const out = realpathSync(mkdtempSync(path.join(tmpdir(), 'paddock-exec-build-')));
    dirs.push(out);
    await expect(buildNativeExec(process.cwd(), out, '/nonexistent/cc')).rejects.toBeInstanceOf(NoCompilerError);
  });

  it('fails pending requests when it dies', async () => {
    const { exec, child } = start();
    await exec.hello;
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await expect(exec.stat('/', true)).rejects.toThrow('the hand executor exited');
  });
});
