import { describe, expect, it } from 'vitest';
import { OWNER } from '~/server/access/testing/callers';
import { createCaller } from '~/server/api/root';
import { demoRuntimePerTest, rejection } from '~/server/api/testing/demo-runtime';
import { SAME_ORIGIN, httpApi } from '~/server/api/testing/http';

const TOKEN = 'ghp_canaryRepositoryToken0123456789';

const runtime = demoRuntimePerTest('paddock-sessions-resources-');
const api = () => createCaller({ runtime: runtime(), caller: OWNER });

/** The signed-in owner's browser, over the HTTP handler (where zod messages are formatted). */
async function ownerHttp() {
  const cookie = (await runtime().access.signIn(await runtime().access.newSigninToken(), { host: 'localhost:3000', secure: false }))!.setCookie.split(';')[0]!;
  const http = httpApi(runtime());
  return { query: (p: string, input: unknown) => http.query(p, input, { ...SAME_ORIGIN, cookie }), mutate: (p: string, input: unknown) => http.mutate(p, input, { ...SAME_ORIGIN, cookie }) };
}

describe('sessions.create with vaults and repositories (the new-session form)', () => {
  it('takes vault ids and repository resources, and sessions.get shows the repositories without their token', async () => {
    const vault = await runtime().vaults.createVault({ display_name: 'team' });
    const s = await api().sessions.create({
      vault_ids: [vault.id],
      resources: [
        { type: 'github_repository', url: 'https://github.com/acme/widgets', authorization_token: TOKEN, checkout: { type: 'branch', name: 'dev' } },
        { type: 'github_repository', url: 'https://github.com/acme/docs.git', mount_path: '/workspace/site' },
      ],
    });
    expect(s.vault_ids).toEqual([vault.id]);
    const got = await api().sessions.get({ id: s.id });
    expect(got.resources).toEqual([
      expect.objectContaining({ type: 'github_repository', url: 'https://github.com/acme/widgets', mount_path: '/workspace/widgets', checkout: { type: 'branch', name: 'dev' } }),
      expect.objectContaining({ type: 'github_repository', url: 'https://github.com/acme/docs.git', mount_path: '/workspace/site', checkout: null }),
    ]);
    // The token is sealed beside its repository, and no answer carries it.
    const first = got.resources[0]!;
    expect(await runtime().repositories.token(s.id, 'id' in first ? first.id : '')).toBe(TOKEN);
    const raw = await (await ownerHttp()).query('sessions.get', { id: s.id });
    expect(raw.status).toBe(200);
    expect(raw.text).toContain('acme/widgets');
    expect(raw.text + JSON.stringify(s) + JSON.stringify(await api().sessions.list({}))).not.toContain(TOKEN);
  });

  it('refuses a repository URL that is not https, or carries credentials, with a message naming the field, and stores nothing', async () => {
    // Over HTTP, as the page gets it: the message the form shows.
    const http = await ownerHttp();
    for (const url of ['http://github.com/acme/widgets', 'https://user:pw@github.com/acme/widgets', 'not a url', 'https://github.com/']) {
      const r = await http.mutate('sessions.create', { resources: [{ type: 'github_repository', url }] });
      expect(r.status, url).toBe(400);
      expect(r.body?.error?.message, url).toMatch(/^invalid input: resources\.0\.url: must be an https URL of a repository/);
    }
    const mount = await http.mutate('sessions.create', { resources: [{ type: 'github_repository', url: 'https://github.com/a/b', mount_path: '/etc' }] });
    expect(mount.body?.error?.message).toMatch(/resources\.0\.mount_path: must be under \/workspace\//);
    expect((await api().sessions.list({})).data).toEqual([]);
  });

  it('refuses a vault that does not exist or is archived, and creates no session', async () => {
    const missing = await rejection(api().sessions.create({ vault_ids: ['vlt_01NOSUCHVAULT'] }));
    expect(missing.code).toBe('BAD_REQUEST');
    expect(missing.message).toContain('vault_ids: vault vlt_01NOSUCHVAULT does not exist');
    const v = await runtime().vaults.createVault({ display_name: 'old' });
    await runtime().vaults.archiveVault(v.id);
    expect((await rejection(api().sessions.create({ vault_ids: [v.id] }))).message).toContain('is archived');
    expect((await rejection(api().sessions.create({ vault_ids: ['not-a-vault'] }))).message).toContain('must be a vault id');
    expect((await api().sessions.list({})).data).toEqual([]);
  });
});
