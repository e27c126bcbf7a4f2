/**
 * Isolation of a sandboxed hand, proven from INSIDE: every check runs a shell in the sandbox and
 * reads what it could and could not do. Nothing is skipped: if this machine cannot sandbox, the
 * suite fails with the reason (CI installs bubblewrap, socat and ripgrep).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxPolicy, type SandboxPolicy } from '~/server/hands/sandbox/policy';
import { checkSandboxAvailable, spawnSandboxed, type SandboxedProcess } from '~/server/hands/sandbox/spawn-sandboxed';

const ENV_MARKER = `marker-${randomBytes(8).toString('hex')}`;
const FILE_MARKER = `file-secret-${randomBytes(8).toString('hex')}`;
const BODY = `hello-from-host-${randomBytes(4).toString('hex')}`;

let root: string;
let dataDir: string;
let workspace: string;
let keyFile: string;
let server: http.Server;
let port: number;

function policyFor(allowedDomains: string[] = [], network: 'limited' | 'unrestricted' = 'limited'): SandboxPolicy {
  return sandboxPolicy({
    workspace,
    tmpDir: path.join(root, 'hand-tmp'),
    dataDir,
    masterKeyFile: keyFile,
    allowedDomains,
    network,
  });
}

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
  /** From spawn to the first byte the sandboxed command wrote. */
  firstOutputMs: number | undefined;
}

/** Collects a sandboxed process's output: `soFar` while it runs, `done` once it has exited. */
function collect(p: SandboxedProcess, t0: number): { soFar: Run; done: Promise<Run> } {
  const soFar: Run = { stdout: '', stderr: '', code: null, firstOutputMs: undefined };
  p.child.stdout.on('data', (d: Buffer) => {
    soFar.firstOutputMs ??= performance.now() - t0;
    soFar.stdout += d.toString();
  });
  p.child.stderr.on('data', (d: Buffer) => (soFar.stderr += d.toString()));
  const done = new Promise<Run>((resolve) => p.child.once('close', (code) => resolve({ ...soFar, code })));
  return { soFar, done };
}

/** Runs a bash script inside a fresh sandbox and returns what it printed. */
async function runInSandbox(script: string, policy = policyFor(), hostPath?: string): Promise<Run> {
  const t0 = performance.now();
  const p = spawnSandboxed({ policy, command: ['/bin/bash', '-c', script], hostPath });
  try {
    return await collect(p, t0).done;
  } finally {
    await p.kill();
  }
}

beforeAll(async () => {
  // The server's own secret, set before any sandbox starts: it must never be visible inside.
  process.env.PADDOCK_TEST_SECRET = ENV_MARKER;
  const available = await checkSandboxAvailable();
  if (!available.ok) throw new Error(`the sandbox cannot run on this machine: ${available.missing}`);

  root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-sandbox-test-'));
  dataDir = path.join(root, 'data');
  // The workspace sits inside the denied data dir, as provisioned hands' workspaces will.
  workspace = path.join(dataDir, 'hands', 'h1', 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  fs.mkdirSync(path.join(dataDir, 'hands', 'h2', 'workspace'), { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'hands', 'h2', 'workspace', 'other.txt'), FILE_MARKER);
  fs.writeFileSync(path.join(dataDir, 'paddock.sqlite'), `SQLite format 3\0${FILE_MARKER}`);
  fs.writeFileSync(path.join(dataDir, 'master.key'), FILE_MARKER, { mode: 0o600 });
  keyFile = path.join(root, 'keys', 'master.key');
  fs.mkdirSync(path.dirname(keyFile));
  fs.writeFileSync(keyFile, FILE_MARKER, { mode: 0o600 });

  server = http.createServer((_req, res) => res.end(BODY));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
}, 30_000);

afterAll(async () => {
  delete process.env.PADDOCK_TEST_SECRET;
  if (server) await new Promise((resolve) => server.close(resolve));
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe('a sandboxed hand', () => {
  it('writes in its workspace and private tmp, and nowhere else', async () => {
    const tag = randomBytes(6).toString('hex');
    const outsideTmp = `/tmp/paddock-escape-${tag}`;
    const inRepo = path.join(process.cwd(), `paddock-escape-${tag}`);
    const inData = path.join(dataDir, `escape-${tag}`);
    const run = await runInSandbox(`
      echo ok > "$PWD/inside.txt" && echo WROTE_WORKSPACE
      echo ok > "$TMPDIR/t" && echo WROTE_TMP
      for p in /etc/${tag} /usr/${tag}; do echo x > "$p" 2>/dev/null && echo "ESCAPED $p"; done
      for p in ${outsideTmp} ${inRepo} /tmp/claude/${tag} ${inData}; do echo x > "$p" 2>/dev/null; done
      echo x > ${inData} && echo "WROTE_DENIED_DIR"
      echo PWD=$PWD HOME=$HOME TMPDIR=$TMPDIR
    `);
    expect(run.stdout).toContain('WROTE_WORKSPACE');
    expect(run.stdout).toContain('WROTE_TMP');
    expect(run.stdout).not.toContain('ESCAPED');
    // A hidden directory (the OS tmp dir, the project, the data dir) is an empty tmpfs inside the
    // sandbox: a write there (refused to a hand with a uid of its own, under a root server) lands in
    // that tmpfs at most, and never reaches the host (checked below).
    const tmp = path.join(root, 'hand-tmp');
    expect(run.stdout).toContain(`PWD=${workspace} HOME=${tmp}/home TMPDIR=${tmp}`);
    expect(fs.readFileSync(path.join(workspace, 'inside.txt'), 'utf8')).toBe('ok\n');
    for (const p of [outsideTmp, inRepo, inData, `/tmp/claude/${tag}`]) expect(fs.existsSync(p)).toBe(false);
  });

  it("cannot read the server's database, key files or another hand's workspace", async () => {
    const run = await runInSandbox(`
      cat ${dataDir}/paddock.sqlite ${dataDir}/master.key ${keyFile} ${dataDir}/hands/h2/workspace/other.txt
      ls -A ${dataDir} ${dataDir}/hands
      grep -r . ${dataDir} ${path.dirname(keyFile)} 2>/dev/null
      echo DONE
    `);
    expect(run.stdout).toContain('DONE');
    expect(run.stdout + run.stderr).not.toContain(FILE_MARKER);
    // Sanity: the files are there for the host, so the check above is not vacuous.
    expect(fs.readFileSync(path.join(dataDir, 'master.key'), 'utf8')).toBe(FILE_MARKER);
  });

  it("sees none of the server's environment variables, only those given to it", async () => {
    const p = spawnSandboxed({
      policy: policyFor(),
      command: ['/bin/bash', '-c', 'env; echo DONE'],
      env: { HAND_SETTING: 'given' },
    });
    const run = await collect(p, performance.now()).done.finally(() => p.kill());
    expect(run.stdout).toContain('DONE');
    expect(run.stdout).toMatch(/^HAND_SETTING=given$/m);
    expect(run.stdout).not.toContain(ENV_MARKER);
    expect(run.stdout).not.toMatch(/^(PADDOCK_[A-Z_]+|ANTHROPIC_[A-Z_]+|NODE_OPTIONS)=/m);
    expect(run.stdout).toMatch(new RegExp(`^HOME=${path.join(root, 'hand-tmp', 'home')}$`, 'm'));
  });

  it("finds no trace of the server's environment in /proc (its own PID namespace)", async () => {
    const t0 = performance.now();
    const p = spawnSandboxed({
      policy: policyFor(),
      command: [
        '/bin/bash',
        '-c',
        `
        echo "== pid1"; tr '\\0' '\\n' < /proc/1/environ
        echo "== all"; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f" 2>/dev/null; done
        echo "== test-process"; tr '\\0' '\\n' < /proc/${process.pid}/environ 2>&1
        read -r launcher_pid
        echo "== launcher"; tr '\\0' '\\n' < /proc/$launcher_pid/environ 2>&1
        echo "== pids"; ls /proc | grep -c '^[0-9]'
        `,
      ],
    });
    // The launcher holds the policy in its environment; its real pid is only known now.
    p.child.stdin.write(`${p.child.pid}\n`);
    const run = await collect(p, t0).done.finally(() => p.kill());
    expect(run.stdout).toContain('== pids');
    expect(run.stdout).not.toContain(ENV_MARKER);
    expect(run.stdout).not.toContain('PADDOCK_SANDBOX_POLICY');
    // Only the sandbox's own few processes exist in its /proc, never the host's.
    const pids = Number(run.stdout.split('== pids')[1]?.trim());
    expect(pids).toBeGreaterThan(0);
    expect(pids).toBeLessThan(20);
  });

  it('cannot open a TCP connection when no host is allowlisted', async () => {
    const run = await runInSandbox(`
      exec 3<>/dev/tcp/127.0.0.1/${port} && echo DIRECT_CONNECTED
      NO_PROXY= no_proxy= curl -sS --max-time 5 http://127.0.0.1:${port}/
      curl -sS --max-time 5 http://127.0.0.1:${port}/
      echo DONE
    `);
    expect(run.stdout).toContain('DONE');
    expect(run.stdout).not.toContain('DIRECT_CONNECTED');
    expect(run.stdout).not.toContain(BODY);
    // The runtime's proxy answers with its own refusal: proof the request reached the filter.
    expect(run.stdout).toContain('Connection blocked by network allowlist');
  });

  it('reaches an allowlisted host through the runtime proxy, and nothing else', async () => {
    // curl honours HTTP_PROXY (set by the runtime). NO_PROXY is cleared because the runtime lists
    // 127.0.0.1/localhost there, which would send the request straight into the empty netns.
    const run = await runInSandbox(
      `
      command -v curl >/dev/null || { echo "curl is required by this test"; exit 3; }
      for i in 1 2 3 4 5 6 7 8 9 10; do
        body=$(NO_PROXY= no_proxy= curl -sS --fail --max-time 3 http://127.0.0.1:${port}/ 2>&1) && break
        sleep 0.1 # the proxy may still be warming up
      done
      echo "ALLOWED:$body"
      echo "BY_NAME:$(NO_PROXY= no_proxy= curl -sS --max-time 3 http://localhost:${port}/ 2>&1)"
      exec 3<>/dev/tcp/127.0.0.1/${port} 2>/dev/null && echo DIRECT_CONNECTED
      echo DONE
    `,
      policyFor(['127.0.0.1']),
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`ALLOWED:${BODY}`);
    // The allowlist is by name: localhost is not 127.0.0.1 to the filter.
    expect(run.stdout).toContain('BY_NAME:Connection blocked by network allowlist');
    // No network namespace of its own: only the proxy leads out.
    expect(run.stdout).not.toContain('DIRECT_CONNECTED');
  });

  it('lets any host past the allowlist when unrestricted, but reaches a private address only when it is listed', async () => {
    // No public host is reachable from a test, only this machine. What is shown: a listed address
    // is reached; an unlisted name gets past the allowlist (no 403: the proxy tries it, and finds
    // no such host); loopback by an unlisted address or name is refused by the unrestricted hand's
    // own rule, whose reason is the CONNECT's status phrase, and the server there is never reached.
    const OTHER = `other-server-${randomBytes(4).toString('hex')}`;
    const other = http.createServer((_req, res) => res.end(OTHER));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as AddressInfo).port;
    const script = `
      for i in 1 2 3 4 5 6 7 8 9 10; do
        body=$(NO_PROXY= no_proxy= curl -sS --fail --max-time 3 http://127.0.0.1:${port}/ 2>&1) && break
        sleep 0.1 # the proxy may still be warming up
      done
      echo "LISTED:$body"
      echo "UNLISTED_NAME:$(NO_PROXY= no_proxy= curl -sS -i --max-time 5 http://paddock-test.invalid/ 2>&1)"
      echo "LOOPBACK_ADDRESS:$(NO_PROXY= no_proxy= curl -sS -i --max-time 3 https://127.0.0.1:${otherPort}/ 2>&1)"
      echo "LOOPBACK_NAME:$(NO_PROXY= no_proxy= curl -sS -i --max-time 3 https://localhost:${otherPort}/ 2>&1)"
      echo "PLAIN_HTTP:$(NO_PROXY= no_proxy= curl -sS -i --max-time 3 http://localhost:${otherPort}/ 2>&1)"
      echo "DONE:"
    `;
    const section = (out: string, name: string) => new RegExp(`${name}:([\\s\\S]*?)\\n[A-Z_]+:`).exec(out)?.[1] ?? '';
    try {
      const open = await runInSandbox(script, policyFor([`127.0.0.1:${port}`], 'unrestricted'));
      expect(section(open.stdout, 'LISTED')).toBe(BODY);
      expect(section(open.stdout, 'UNLISTED_NAME')).toMatch(/^HTTP\/1\.1 502 Bad Gateway/);
      expect(section(open.stdout, 'LOOPBACK_ADDRESS')).toContain("403 a loopback address is reachable only when listed in the environment's allowed_hosts");
      expect(section(open.stdout, 'LOOPBACK_NAME')).toContain("403 a loopback name is reachable only when listed in the environment's allowed_hosts");
      expect(section(open.stdout, 'PLAIN_HTTP')).toMatch(/^HTTP\/1\.1 403 Forbidden/);
      // The same requests from a limited hand stop at the allowlist.
      const limited = await runInSandbox(script, policyFor([`127.0.0.1:${port}`]));
      expect(section(limited.stdout, 'LISTED')).toBe(BODY);
      expect(section(limited.stdout, 'UNLISTED_NAME')).toMatch(/^HTTP\/1\.1 403 Forbidden[\s\S]*blocked-by-allowlist/);
      expect(limited.stdout).not.toContain('reachable only when listed');
      for (const run of [open, limited]) expect(run.stdout).not.toContain(OTHER);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('keeps git usable in a repository workspace while its hooks stay read-only', async () => {
    const repo = path.join(dataDir, 'hands', 'h3', 'workspace');
    const policy = sandboxPolicy({ workspace: repo, tmpDir: path.join(root, 'h3-tmp'), dataDir });
    const commit = (msg: string) => `
      echo ${msg} >> f && git add f && git -c user.name=hand -c user.email=hand@example.com commit -qm ${msg} && echo COMMITTED_${msg}
      echo 'touch /tmp/pwned' > .git/hooks/post-commit && echo HOOK_WRITTEN_${msg}
    `;
    const first = await runInSandbox(`git init -q . && echo INIT ${commit('one')}`, policy);
    expect(first.stdout).toContain('COMMITTED_one');
    // The runtime protects the .git it finds in the workspace when the sandbox starts: a hook
    // planted there would run later on the host, wherever git touches this repository.
    fs.rmSync(path.join(repo, '.git', 'hooks', 'post-commit'), { force: true });
    const second = await runInSandbox(commit('two'), policy);
    expect(second.stdout).toContain('COMMITTED_two');
    expect(second.stdout).not.toContain('HOOK_WRITTEN');
    expect(fs.existsSync(path.join(repo, '.git', 'hooks', 'post-commit'))).toBe(false);
  });

  it('passes stdin and stdout straight through and starts quickly', async ({ annotate }) => {
    const t0 = performance.now();
    const p = spawnSandboxed({
      policy: policyFor(),
      command: ['/bin/bash', '-c', 'echo ready; while read -r line; do echo "got:$line"; done'],
    });
    const run = collect(p, t0);
    try {
      p.child.stdin.write('{"jsonrpc":"2.0","id":1}\n');
      await waitFor(() => run.soFar.stdout.includes('got:'), 10_000);
    } finally {
      p.child.stdin.end();
    }
    const result = await run.done;
    expect(result.stdout).toBe('ready\ngot:{"jsonrpc":"2.0","id":1}\n');
    expect(result.code).toBe(0);
    expect(result.firstOutputMs).toBeDefined();
    await annotate(`launch time (spawn → first output from inside): ${Math.round(result.firstOutputMs ?? -1)} ms`);
    expect(result.firstOutputMs).toBeLessThan(5_000);
  });

  it('ends the sandboxed command when its stdin closes, and kill() stops it at once', async () => {
    const beat = path.join(workspace, 'heartbeat');
    const script = `while :; do date +%s%N > ${beat}; sleep 0.05; done`;

    const a = spawnSandboxed({ policy: policyFor(), command: ['/bin/bash', '-c', script] });
    await waitFor(() => fs.existsSync(beat), 10_000);
    a.child.stdin.end();
    const ended = await Promise.race([a.exited, sleep(6_000).then(() => 'still running')]);
    expect(ended).not.toBe('still running');
    await a.kill();

    fs.rmSync(beat, { force: true });
    const b = spawnSandboxed({ policy: policyFor(), command: ['/bin/bash', '-c', script] });
    await waitFor(() => fs.existsSync(beat), 10_000);
    await b.kill();
    const last = fs.readFileSync(beat, 'utf8');
    await sleep(300);
    // Nothing in the sandbox survived the launcher: the heartbeat has stopped.
    expect(fs.readFileSync(beat, 'utf8')).toBe(last);
  });

  it('refuses to start with a clear error when bubblewrap is missing', async () => {
    // A PATH with everything the runtime needs except bwrap.
    const bin = path.join(root, 'bin-without-bwrap');
    fs.mkdirSync(bin, { recursive: true });
    for (const tool of ['socat', 'rg', 'which', 'bash', 'setpriv']) {
      const found = (process.env.PATH ?? '').split(':').map((d) => path.join(d, tool)).find((p) => fs.existsSync(p));
      if (found && !fs.existsSync(path.join(bin, tool))) fs.symlinkSync(found, path.join(bin, tool));
    }
    const run = await runInSandbox('echo SHOULD_NOT_RUN', policyFor(), bin);
    expect(run.stdout).not.toContain('SHOULD_NOT_RUN');
    expect(run.code).toBe(69);
    expect(run.stderr).toContain(
      'sandbox unavailable: bubblewrap (bwrap) not found; install it with apt-get install bubblewrap',
    );
    expect(await checkSandboxAvailable({ hostPath: bin })).toEqual({
      ok: false,
      missing: 'sandbox unavailable: bubblewrap (bwrap) not found; install it with apt-get install bubblewrap',
    });
  });
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(20);
  }
}
