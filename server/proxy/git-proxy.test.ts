import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { GitProxy, parseProxyPath } from '~/server/proxy/git-proxy';
import { repositoryErrorType } from '~/server/proxy/repository-errors';
import { RepositoryStore } from '~/server/proxy/repository-store';
import { type GitServer, git, startGitServer } from '~/server/proxy/testing/git-server';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { newMasterKey } from '~/server/vault/envelope';

const TOKEN = 'ghp_TESTsecretTOKEN0123456789abcdef';


let gitServer: GitServer;
let dir: string;
let store: KyselySessionStore;
let repos: RepositoryStore;
let proxy: GitProxy;
let logged: string[];

beforeAll(async () => {
  gitServer = await startGitServer(TOKEN);
  await gitServer.createRepo('app', { 'README.md': 'hello\n' });
});
afterAll(async () => {
  await gitServer.close();
});

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-git-proxy-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  repos = new RepositoryStore(store.db, newMasterKey());
  proxy = await new GitProxy({ repositories: repos, upstreamCa: gitServer.ca }).start();
  gitServer.setToken(TOKEN);
  logged = [];
  vi.stubEnv('PADDOCK_LOG_LEVEL', 'debug');
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  });
});
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await proxy.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function sessionWithRepo(url: string, token: string | null = TOKEN) {
  const s = await store.createSession({ environment_id: 'env_default', vault_ids: [], resources: [] });
  const [r] = await repos.add(s.id, [{ type: 'github_repository', url, ...(token !== null ? { authorization_token: token } : {}) }]);
  const cap = await repos.issueCapability(s.id, r!.id, 'sandbox-1');
  return { session: s.id, resource: r!.id, cap, remote: proxy.remoteUrl(cap, url) };
}

async function gitFails(args: string[], cwd: string): Promise<string> {
  try {
    await git(args, cwd);
  } catch (e) {
    return String((e as { stderr?: string }).stderr ?? e);
  }
  throw new Error(`git ${args.join(' ')} succeeded`);
}

describe('git proxy', () => {
  it('clones, fetches and pushes through the proxy, with the token added upstream and found nowhere on the client side', async () => {
    const url = `${gitServer.origin}/app.git`;
    const { remote } = await sessionWithRepo(url);
    const work = path.join(dir, 'clone');
    await git(['clone', '-q', remote, work], dir);
    expect(readFileSync(path.join(work, 'README.md'), 'utf8')).toBe('hello\n');
    const config = readFileSync(path.join(work, '.git/config'), 'utf8');
    expect(config).toContain(remote);
    expect(config).not.toContain(TOKEN);

    // Push a commit, then a second clone fetches it.
    await git(['checkout', '-q', '-b', 'feature'], work);
    await git(['commit', '-q', '--allow-empty', '-m', 'from the hand'], work);
    await git(['push', '-q', 'origin', 'feature'], work);
    expect(await git(['--git-dir', path.join(gitServer.root, 'app.git'), 'log', '--format=%s', 'feature'], dir)).toContain('from the hand');
    await git(['fetch', '-q', 'origin'], work);
    expect(await git(['branch', '-r'], work)).toContain('origin/feature');

    const all = logged.join('');
    expect(all).toContain('git proxy request');
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString('base64'));
  });

  it('drops the credentials and cookies the hand sends and answers without the token', async () => {
    const { remote } = await sessionWithRepo(`${gitServer.origin}/app.git`);
    const before = gitServer.authorizations.length;
    const res = await fetch(`${remote}/info/refs?service=git-upload-pack`, { headers: { authorization: 'Basic ZXZpbDpldmls', cookie: 'a=b' } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('git-upload-pack');
    expect(text).not.toContain(TOKEN);
    expect([...res.headers.keys()].some((h) => h === 'set-cookie' || h === 'www-authenticate')).toBe(false);
    expect(gitServer.authorizations.slice(before)).toEqual([`Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`]);
    expect(gitServer.cookies.slice(before)).toEqual([undefined]);
  });

  it('does not follow a redirect, nor pass its Location on', async () => {
    const { remote } = await sessionWithRepo(`${gitServer.origin}/moved.git`);
    const before = gitServer.authorizations.length;
    const res = await fetch(`${remote}/info/refs?service=git-upload-pack`, { redirect: 'manual' });
    expect(res.status).toBe(502);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('set-cookie')).toBeNull();
    // One request upstream: the redirect was not followed (elsewhere.example would not resolve anyway).
    expect(gitServer.authorizations.length - before).toBe(1);
  });

  it('maps a wrong token and a missing token to repository_authentication_error', async () => {
    const wrong = await sessionWithRepo(`${gitServer.origin}/app.git`, 'ghp_wrong');
    const out1 = await gitFails(['clone', '-q', wrong.remote, path.join(dir, 'c1')], dir);
    // The proxy passes the host's 401 on (without its WWW-Authenticate): git then asks for a user it cannot get.
    expect(out1).toMatch(/401|could not read Username/);
    expect(repositoryErrorType('clone', out1)).toBe('repository_authentication_error');
    expect(out1).not.toContain('ghp_wrong');

    const none = await sessionWithRepo(`${gitServer.origin}/app.git`, null);
    const out2 = await gitFails(['clone', '-q', none.remote, path.join(dir, 'c2')], dir);
    expect(repositoryErrorType('clone', out2)).toBe('repository_authentication_error');
  });

  it('maps an unknown repository to repository_not_found_error', async () => {
    const { remote } = await sessionWithRepo(`${gitServer.origin}/nope.git`);
    const out = await gitFails(['clone', '-q', remote, path.join(dir, 'c')], dir);
    expect(repositoryErrorType('clone', out)).toBe('repository_not_found_error');
  });

  it('answers 404 for a revoked or unknown capability, the same way', async () => {
    const { session, remote, cap } = await sessionWithRepo(`${gitServer.origin}/app.git`);
    expect((await fetch(`${remote}/info/refs?service=git-upload-pack`)).status).toBe(200);
    await repos.revokeHand(session, 'sandbox-1');
    const revoked = await fetch(`${remote}/info/refs?service=git-upload-pack`);
    const unknown = await fetch(`${remote.replace(cap, 'A'.repeat(43))}/info/refs?service=git-upload-pack`);
    expect([revoked.status, unknown.status]).toEqual([404, 404]);
    expect(await revoked.text()).toBe(await unknown.text());
    expect(await gitFails(['clone', '-q', remote, path.join(dir, 'c')], dir)).toMatch(/404|not found/);
  });

  it("does not let another session's capability reach this session's repository", async () => {
    await gitServer.createRepo('other', { 'x.txt': 'x\n' });
    const mine = await sessionWithRepo(`${gitServer.origin}/app.git`);
    const theirs = await sessionWithRepo(`${gitServer.origin}/other.git`);
    const before = gitServer.authorizations.length;
    // Their capability with my repository's path: refused before anything goes upstream.
    const crossed = mine.remote.replace(mine.cap, theirs.cap);
    expect((await fetch(`${crossed}/info/refs?service=git-upload-pack`)).status).toBe(404);
    expect(gitServer.authorizations.length).toBe(before);
    await expect(repos.resolveCapability(theirs.cap)).resolves.toMatchObject({ sessionId: theirs.session, resourceId: theirs.resource });
  });

  it('passes a gzip request body through as is (a fetch negotiating many commits)', async () => {
    await gitServer.createRepo('busy', { 'a.txt': 'a\n' });
    const { remote } = await sessionWithRepo(`${gitServer.origin}/busy.git`);
    const work = path.join(dir, 'busy');
    await git(['clone', '-q', remote, work], dir);
    // Local commits the server lacks make the client send many "have" lines: git gzips that body.
    // Dated after the common commit, one second apart: the haves go newest first, so the common
    // commit comes after 60 of them, past the first rounds (same-second dates made that order vary).
    for (let i = 0; i < 60; i++) {
      const date = new Date(Date.UTC(2030, 0, 1) + i * 1000).toISOString();
      await git(['commit', '-q', '--allow-empty', '-m', `local ${i}`], work, { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
    }
    const other = path.join(dir, 'other');
    await git(['clone', '-q', remote, other], dir);
    await git(['commit', '-q', '--allow-empty', '-m', 'upstream change'], other);
    await git(['push', '-q', 'origin', 'main'], other);
    const before = gitServer.contentEncodings.length;
    // Protocol v0: its negotiation gzips a body this large (v2's may not, depending on the git version).
    await git(['-c', 'protocol.version=0', 'fetch', '-q', 'origin'], work);
    expect(gitServer.contentEncodings.slice(before)).toContain('gzip');
    expect(await git(['log', '--format=%s', 'origin/main'], work)).toContain('upstream change');
  });

  it('uses a rotated token from the next fetch on', async () => {
    const { session, resource, remote } = await sessionWithRepo(`${gitServer.origin}/app.git`);
    const work = path.join(dir, 'clone');
    await git(['clone', '-q', remote, work], dir);
    gitServer.setToken('ghp_rotated');
    expect(repositoryErrorType('clone', await gitFails(['fetch', '-q', 'origin'], work))).toBe('repository_authentication_error');
    await repos.setToken(session, resource, 'ghp_rotated');
    await git(['fetch', '-q', 'origin'], work);
  });

  it('serves only smart HTTP: other paths and methods are 404', async () => {
    const { remote } = await sessionWithRepo(`${gitServer.origin}/app.git`);
    for (const [method, suffix] of [
      ['GET', '/HEAD'],
      ['GET', '/objects/info/packs'],
      ['GET', '/info/refs'],
      ['GET', '/info/refs?service=git-upload-archive'],
      ['GET', '/info/refs?service=git-upload-pack&x=1'],
      ['POST', '/git-upload-pack?x=1'],
      ['GET', '/git-upload-pack'],
      ['PUT', '/git-receive-pack'],
    ] as const) {
      expect((await fetch(`${remote}${suffix}`, { method })).status, `${method} ${suffix}`).toBe(404);
    }
    expect(parseProxyPath('GET', '/short/app.git/info/refs?service=git-upload-pack')).toBeNull();
  });

  it('refuses a repository on loopback unless the operator trusts it: 502 naming the policy, and the git host sees no request', async () => {
    const { remote } = await sessionWithRepo(`${gitServer.origin}/app.git`);
    vi.stubEnv('PADDOCK_OUTBOUND_ALLOW', '');
    const before = gitServer.authorizations.length;
    const res = await fetch(`${remote}/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(502);
    expect(await res.text()).toBe('127.0.0.1 was refused by the network policy: the server connects only to public addresses, unless its operator trusts the host\n');
    expect(await proxy.refusal(`${gitServer.origin}/app.git`)).toContain('127.0.0.1 was refused by the network policy');
    expect(await gitFails(['clone', '-q', remote, path.join(dir, 'c')], dir)).toMatch(/502/);
    expect(gitServer.authorizations.length).toBe(before);
    expect(logged.join('')).toContain('git proxy upstream refused by the network policy');

    // Trusted on its port (as the test setup does for every loopback host), it goes through.
    vi.stubEnv('PADDOCK_OUTBOUND_ALLOW', new URL(gitServer.origin).host);
    const ok = await fetch(`${remote}/info/refs?service=git-upload-pack`);
    expect([ok.status, await ok.text()]).toEqual([200, expect.stringContaining('git-upload-pack')]);
    expect(await proxy.refusal(`${gitServer.origin}/app.git`)).toBeNull();
  });

  it.each(['https://169.254.169.254/latest/app.git', 'https://[fd00::1]/app.git', 'https://metadata.test.invalid/app.git'])('refuses a repository at %s before connecting', async (url) => {
    const strict = await new GitProxy({ repositories: repos, outbound: { allow: [], resolve: () => Promise.resolve([{ address: '169.254.169.254', family: 4 as const }]) } }).start();
    try {
      const { cap } = await sessionWithRepo(url);
      const began = Date.now();
      const res = await fetch(`${strict.remoteUrl(cap, url)}/info/refs?service=git-upload-pack`);
      expect(res.status).toBe(502);
      expect(await res.text()).toMatch(/^\S+ was refused by the network policy/);
      expect(Date.now() - began).toBeLessThan(2_000);
    } finally {
      await strict.close();
    }
  });
});
