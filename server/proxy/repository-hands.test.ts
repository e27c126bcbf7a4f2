import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import { type HandScope, HandRegistry } from '~/server/hands/registry';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { cmdline, descendants } from '~/server/hands/testing/processes';
import { Workspaces } from '~/server/hands/workspaces';
import type { ToolUse } from '~/server/harness/core/decide';
import { LiveBus } from '~/server/session/live-bus';
import { runToolCall } from '~/server/harness/steps/tool-call';
import { GitProxy } from '~/server/proxy/git-proxy';
import { RepositoryHands, cloneScript, shellQuote } from '~/server/proxy/repository-hands';
import { RepositoryStore } from '~/server/proxy/repository-store';
import { type GitServer, git, startGitServer } from '~/server/proxy/testing/git-server';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';
import { newMasterKey } from '~/server/vault/envelope';

/**
 * Repositories in real sandboxed hands: cloned at provision through the git proxy, usable with
 * git from inside (log, fetch, push), with the token nowhere in the hand, and dead once released.
 */
const TOKEN = 'ghp_HANDsecret0123456789abcdefXYZ';
const run = promisify(execFile);

let gitServer: GitServer;
let dir: string;
let store: SqliteSessionStore;
let repos: RepositoryStore;
let proxy: GitProxy;
let registry: HandRegistry;

beforeAll(async () => {
  gitServer = await startGitServer(TOKEN);
  await gitServer.createRepo('widgets', { 'README.md': 'widgets here\n' });
});
afterAll(async () => {
  await gitServer.close();
});

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-repo-hands-'));
  store = await openSqliteStore({ file: path.join(dir, 'data', 'paddock.sqlite') });
  repos = new RepositoryStore(store.db, newMasterKey());
  proxy = await new GitProxy({ repositories: repos, upstreamCa: gitServer.ca }).start();
  gitServer.setToken(TOKEN);
  const provisioner = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: path.join(dir, 'hands') });
  registry = new HandRegistry({ store, live: new LiveBus(), provisioners: { sandbox: provisioner }, defaultKind: 'sandbox', workspaces: new Workspaces(path.join(dir, 'hands')), repositories: new RepositoryHands(repos, proxy) });
});
afterEach(async () => {
  await registry.closeAll();
  await proxy.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function sessionWith(url: string, token: string, extra: object = {}): Promise<HandScope> {
  const s = await store.createSession({});
  await repos.add(s.id, [{ type: 'github_repository', url, authorization_token: token, ...extra }]);
  return { sessionId: s.id, signal: new AbortController().signal, emit: (e, key) => store.emitEvent(s.id, e, { idempotencyKey: key }) };
}

let calls = 0;
async function bash(scope: HandScope, command: string): Promise<string> {
  const call = { id: `sevt_call${++calls}`, name: 'bash', input: { command }, hand: undefined } as unknown as ToolUse;
  return (await runToolCall(registry, scope, call, scope.signal)).text;
}

/** Polls an async check every 50 ms until it holds or `ms` pass. */
async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

const errors = async (id: string) => (await store.getEvents(id)).filter((e): e is StoredEvent & { type: 'session.error' } => e.type === 'session.error').map((e) => e.error);

describe('a repository resource in a sandboxed hand', () => {
  it('is cloned at provision and works with git from inside, with the token nowhere in the hand, and dies with the hand', async () => {
    const url = `${gitServer.origin}/widgets.git`;
    const scope = await sessionWith(url, TOKEN);
    const log = await bash(scope, 'cd widgets && cat README.md && git log --format=%s');
    expect(log).toContain('widgets here');
    expect(log).toContain('first');
    expect(await errors(scope.sessionId)).toEqual([]);
    // The proxy is on the hand's allowlist only: web_fetch (the session's network policy) never gets it.
    expect((await registry.networkPolicy(scope.sessionId)).hosts).not.toContain(proxy.host);
    const cloned = (await store.getEvents(scope.sessionId)).filter((e) => e.type === 'hand.repository_cloned');
    expect(cloned).toMatchObject([{ hand: 'sandbox-1', repository_url: url, mount_path: '/workspace/widgets' }]);

    // fetch and push, as the agent would with bash.
    const pushed = await bash(scope, 'cd widgets && git fetch origin 2>&1 && echo FETCHED && git -c user.name=agent -c user.email=a@example.com commit -q --allow-empty -m "from the hand" && git push -q origin HEAD:refs/heads/from-hand 2>&1 && echo PUSHED');
    expect(pushed).toContain('FETCHED');
    expect(pushed).toContain('PUSHED');
    expect(await git(['--git-dir', path.join(gitServer.root, 'widgets.git'), 'log', '--format=%s', 'from-hand'], dir)).toContain('from the hand');

    // Nothing in the hand shows the token: its environment, its config, any process's command line.
    const inside = await bash(scope, 'env; cat widgets/.git/config; cat /proc/*/cmdline 2>/dev/null | tr "\\0" " "; git -C widgets remote -v');
    expect(inside).toContain('[::ffff:127.0.0.1]');
    expect(inside).not.toContain(TOKEN);
    expect(inside).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString('base64'));
    const onDisk = await run('grep', ['-r', '-l', TOKEN, path.join(dir, 'hands')]).then((r) => r.stdout, () => '');
    expect(onDisk).toBe('');

    // Released: its capability is dead (404 at the proxy, nothing left to resolve).
    const remote = /url = (\S+)/.exec(inside)![1]!;
    expect((await fetch(`${remote.replace('[::ffff:127.0.0.1]', '127.0.0.1')}/info/refs?service=git-upload-pack`)).status).toBe(200);
    await registry.release(scope, 'sandbox-1');
    expect((await fetch(`${remote.replace('[::ffff:127.0.0.1]', '127.0.0.1')}/info/refs?service=git-upload-pack`)).status).toBe(404);
    expect(await store.db.selectFrom('git_capabilities').selectAll().where('session_id', '=', scope.sessionId).execute()).toEqual([]);
  }, 60_000);

  it("revokes the hand's capability when the hand is lost", async () => {
    const scope = await sessionWith(`${gitServer.origin}/widgets.git`, TOKEN);
    const workspace = (await bash(scope, 'pwd')).split('\n')[0]!.trim();
    const caps = () => store.db.selectFrom('git_capabilities').selectAll().where('session_id', '=', scope.sessionId).execute();
    expect((await caps()).map((c) => c.hand)).toEqual(['sandbox-1']);
    // The hand's processes die (as an OOM kill or a crash would end them).
    for (const pid of descendants(process.pid).filter((p) => cmdline(p).includes(workspace))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    expect(await until(async () => (await store.getEvents(scope.sessionId)).some((e) => e.type === 'hand.lost'), 10_000)).toBe(true);
    expect(await until(async () => (await caps()).length === 0, 5_000)).toBe(true);
  }, 60_000);

  it('records a refused token as repository_authentication_error naming the URL, and the session goes on', async () => {
    const url = `${gitServer.origin}/widgets.git`;
    const scope = await sessionWith(url, 'ghp_wrong', { mount_path: '/workspace/src/w' });
    expect(await bash(scope, 'echo STILL_WORKS; ls src 2>&1')).toContain('STILL_WORKS');
    const [error] = await errors(scope.sessionId);
    expect(error).toMatchObject({ type: 'repository_authentication_error', repository_url: url, retry_status: { type: 'retrying' } });
    expect(error!.message).toContain(url);
    expect(JSON.stringify(await store.getEvents(scope.sessionId))).not.toContain('ghp_wrong');
  }, 60_000);

  it('does not clone a repository on loopback the operator does not trust: a clone error saying the network policy refused it, and the git host sees no request', async () => {
    const url = `${gitServer.origin}/widgets.git`;
    vi.stubEnv('PADDOCK_OUTBOUND_ALLOW', '');
    try {
      const before = gitServer.authorizations.length;
      const scope = await sessionWith(url, TOKEN);
      expect(await bash(scope, 'echo STILL_WORKS; ls widgets 2>&1')).toContain('STILL_WORKS');
      const [error] = await errors(scope.sessionId);
      expect(error).toMatchObject({ type: 'repository_clone_error', repository_url: url });
      expect(error!.message).toContain('127.0.0.1 was refused by the network policy');
      expect(gitServer.authorizations.length).toBe(before);
    } finally {
      vi.unstubAllEnvs();
    }
  }, 60_000);

  it('checks out the branch or commit asked for, and names a missing branch as repository_checkout_error', async () => {
    await git(['--git-dir', path.join(gitServer.root, 'widgets.git'), 'branch', '-f', 'stable', 'main'], dir);
    const scope = await sessionWith(`${gitServer.origin}/widgets.git`, TOKEN, { checkout: { type: 'branch', name: 'stable' } });
    expect(await bash(scope, 'git -C widgets rev-parse --abbrev-ref HEAD')).toContain('stable');
    const sha = (await git(['--git-dir', path.join(gitServer.root, 'widgets.git'), 'rev-parse', 'main'], dir)).trim();
    const pinned = await sessionWith(`${gitServer.origin}/widgets.git`, TOKEN, { checkout: { type: 'commit', sha } });
    expect(await bash(pinned, 'git -C widgets rev-parse HEAD')).toContain(sha);
    const missing = await sessionWith(`${gitServer.origin}/widgets.git`, TOKEN, { checkout: { type: 'branch', name: 'no-such-branch' } });
    await bash(missing, 'true');
    expect((await errors(missing.sessionId)).map((e) => e.type)).toEqual(['repository_checkout_error']);
  }, 60_000);
});

describe('the clone script', () => {
  it('quotes what it is given, so a branch name or path cannot run a command', () => {
    expect(shellQuote(`a'b; rm -rf /`)).toBe(`'a'\\''b; rm -rf /'`);
    const script = cloneScript({ mount_path: '/workspace/x y', checkout: { type: 'branch', name: '$(touch pwned)' } }, 'http://h/c/r.git');
    expect(script).toContain(`--branch='$(touch pwned)'`);
    expect(script).toContain(`'./x y'`);
  });
});
