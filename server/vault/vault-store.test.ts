import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, InvalidInputError, NotFoundError } from '~/lib/errors';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';
import { type MasterKey, MasterKeyMismatchError, newMasterKey } from '~/server/vault/envelope';
import { RepositoryStore } from '~/server/proxy/repository-store';
import { rotateMasterKey } from '~/server/vault/rotate';
import { VaultSecrets } from '~/server/vault/secrets';
import { type SealedFields, VaultStore } from '~/server/vault/vault-store';

const CANARY = 'CANARY-7f3a9c-secret-value';
const canary = (n: string) => `${CANARY}-${n}`;

let dir: string;
let store: KyselySessionStore;
let master: MasterKey;
let vaults: VaultStore;
let secrets: VaultSecrets;
let pgDb: TestDatabase | null = null;

beforeAll(async () => {
  pgDb = await createTestDatabase('paddock_vaults');
});
afterAll(async () => {
  await pgDb?.drop();
});

const oauth = (url: string) => ({
  type: 'mcp_oauth' as const,
  mcp_server_url: url,
  access_token: canary('access'),
  expires_at: '2030-01-01T00:00:00Z',
  refresh: { client_id: 'client-1', refresh_token: canary('refresh'), token_endpoint: 'https://auth.example.com/token', token_endpoint_auth: { type: 'client_secret_post' as const, client_secret: canary('client') }, scope: 'read' },
});

describe.each(['sqlite', 'postgres'] as const)('vault store on %s', (kind) => {
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-vaults-'));
    if (kind === 'sqlite') store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
    else {
      store = await openPostgresStore({ url: pgDb!.url });
      await sql`truncate table vault_credentials, vaults cascade`.execute(store.db);
    }
    master = newMasterKey();
    vaults = new VaultStore(store.db, master);
    secrets = new VaultSecrets(store.db, master);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every byte the database holds (SQLite: the file and its WAL after a checkpoint; PostgreSQL: every row). */
  async function rawDatabase(): Promise<string> {
    if (kind === 'sqlite') {
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
      const file = path.join(dir, 'db.sqlite');
      return [file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f).toString('latin1')).join('');
    }
    const rows = await Promise.all([sql`select * from vaults`.execute(store.db), sql`select * from vault_credentials`.execute(store.db)]);
    return JSON.stringify(rows.map((r) => r.rows));
  }

  it('creates, updates, pages, archives and deletes vaults', async () => {
    const a = await vaults.createVault({ display_name: 'Team A', metadata: { team: 'a' } });
    expect(a).toMatchObject({ type: 'vault', display_name: 'Team A', metadata: { team: 'a' }, archived_at: null });
    expect(a.id).toMatch(/^vlt_[A-Za-z0-9]+$/);
    const b = await vaults.createVault({ display_name: 'Team B' });
    const c = await vaults.createVault({ display_name: 'Team C' });
    expect(await vaults.updateVault(a.id, { display_name: 'A2', metadata: { team: null, env: 'prod' } })).toMatchObject({ display_name: 'A2', metadata: { env: 'prod' } });
    const p1 = await vaults.listVaults({ limit: 2 });
    expect(p1.data.map((v) => v.id)).toEqual([c.id, b.id]);
    const p2 = await vaults.listVaults({ limit: 2, page: p1.next_page });
    expect(p2).toMatchObject({ data: [{ id: a.id }], next_page: null });
    await vaults.archiveVault(b.id);
    expect((await vaults.listVaults({})).data.map((v) => v.id)).toEqual([c.id, a.id]);
    expect((await vaults.listVaults({ includeArchived: true })).data).toHaveLength(3);
    await expect(vaults.updateVault(b.id, { display_name: 'x' })).rejects.toThrow(/archived/);
    expect(await vaults.deleteVault(c.id)).toEqual({ id: c.id, type: 'vault_deleted' });
    await expect(vaults.getVault(c.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(vaults.deleteVault(c.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(vaults.listVaults({ page: 'garbage' })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('stores every value sealed: no response and no byte of the database holds one', async () => {
    const v = await vaults.createVault({ display_name: 'secrets' });
    const made = [
      await vaults.createCredential(v.id, { display_name: 'gh', auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: canary('bearer') } }),
      await vaults.createCredential(v.id, { auth: oauth('https://linear.example.com/mcp') }),
      await vaults.createCredential(v.id, { auth: { type: 'environment_variable', secret_name: 'OPENAI_API_KEY', secret_value: canary('env'), networking: { type: 'limited', allowed_hosts: ['api.openai.com'] } } }),
    ];
    expect(made[0]).toMatchObject({ type: 'vault_credential', vault_id: v.id, display_name: 'gh', auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' } });
    expect(made[0]!.id).toMatch(/^vcrd_/);
    expect(made[1]!.auth).toEqual({ type: 'mcp_oauth', mcp_server_url: 'https://linear.example.com/mcp', expires_at: '2030-01-01T00:00:00Z', refresh: { client_id: 'client-1', token_endpoint: 'https://auth.example.com/token', token_endpoint_auth: { type: 'client_secret_post' }, resource: null, scope: 'read' } });
    expect(made[2]!.auth).toEqual({ type: 'environment_variable', secret_name: 'OPENAI_API_KEY', networking: { type: 'limited', allowed_hosts: ['api.openai.com'] }, injection_location: { header: true, body: false } });
    await vaults.updateCredential(v.id, made[0]!.id, { auth: { type: 'static_bearer', token: canary('bearer2') } });
    const listed = await vaults.listCredentials(v.id, {});
    const got = await Promise.all(made.map((c) => vaults.getCredential(v.id, c.id)));
    expect(JSON.stringify([made, listed, got])).not.toContain(CANARY);
    const raw = await rawDatabase();
    expect(raw).toContain('OPENAI_API_KEY'); // the scan does see the rows
    expect(raw).not.toContain(CANARY);
    // …and the sealed values do open, under the master key, to what was written.
    expect(await secrets.mcpSecret([v.id], 'https://mcp.example.com/mcp')).toEqual({ credentialId: made[0]!.id, vaultId: v.id, type: 'static_bearer', token: canary('bearer2') });
    expect(await secrets.mcpSecret([v.id], 'https://linear.example.com/mcp')).toMatchObject({
      type: 'mcp_oauth',
      accessToken: canary('access'),
      refresh: { refreshToken: canary('refresh'), tokenEndpointAuth: { type: 'client_secret_post', clientSecret: canary('client') } },
    });
  });

  it('keeps one live credential per MCP server URL and per secret name in a vault', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    const other = await vaults.createVault({ display_name: 'other' });
    const first = await vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/a', token: 't1' } });
    await expect(vaults.createCredential(v.id, { auth: oauth('https://mcp.example.com/a') })).rejects.toThrow(ConflictError);
    await expect(vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/a', token: 't2' } })).rejects.toThrow(/mcp_server_url https:\/\/mcp\.example\.com\/a/);
    await vaults.createCredential(other.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/a', token: 't3' } });
    const env = { type: 'environment_variable', secret_name: 'TOKEN', secret_value: 'x', networking: { type: 'unrestricted' } };
    await vaults.createCredential(v.id, { auth: env });
    await expect(vaults.createCredential(v.id, { auth: env })).rejects.toThrow(/secret_name TOKEN/);
    // An archived one is read-only and frees its URL for a new one.
    await vaults.archiveCredential(v.id, first.id);
    await expect(vaults.updateCredential(v.id, first.id, { display_name: 'x' })).rejects.toThrow(/archived/);
    await vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/a', token: 't4' } });
    expect((await vaults.listCredentials(v.id, {})).data).toHaveLength(2);
    expect((await vaults.listCredentials(v.id, { includeArchived: true })).data).toHaveLength(3);
    // Racing creates of one URL: exactly one is stored, the others are conflicts.
    const raced = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => vaults.createCredential(other.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://race.example.com/mcp', token: `t${i}` } })));
    expect(raced.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of raced) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConflictError);
    // An archived vault is read-only: no new credential, and its credentials are archived with it.
    await vaults.archiveVault(other.id);
    await expect(vaults.createCredential(other.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://new.example.com/mcp', token: 't' } })).rejects.toThrow(/archived/);
    expect((await vaults.listCredentials(other.id, {})).data).toEqual([]);
  });

  it('refuses bad credentials by field, before writing anything', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    const bad = [
      { type: 'static_bearer', mcp_server_url: 'ftp://x.example.com', token: 't' },
      { type: 'static_bearer', mcp_server_url: 'https://user:pw@x.example.com/mcp', token: 't' },
      { type: 'static_bearer', mcp_server_url: 'https://x.example.com/mcp', token: '' },
      { type: 'static_bearer', mcp_server_url: 'https://x.example.com/mcp', token: 'x'.repeat(20_000) },
      { type: 'environment_variable', secret_name: '1BAD', secret_value: 'v', networking: { type: 'unrestricted' } },
      { type: 'environment_variable', secret_name: 'A=B', secret_value: 'v', networking: { type: 'unrestricted' } },
      { type: 'environment_variable', secret_name: 'OK', secret_value: 'v', networking: { type: 'limited', allowed_hosts: ['http://x'] } },
      // Names the hand needs for itself: a secret there would break it or steer its proxy.
      ...['PATH', 'HOME', 'HTTPS_PROXY', 'no_proxy', 'SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS', 'LD_PRELOAD', 'PADDOCK_HAND_PASS_ENV'].map((secret_name) => ({ type: 'environment_variable', secret_name, secret_value: 'v', networking: { type: 'unrestricted' } })),
      { type: 'mcp_oauth', mcp_server_url: 'https://x.example.com', access_token: 'a', expires_at: 'tomorrow' },
      { type: 'password', mcp_server_url: 'https://x.example.com', token: 't' },
    ];
    for (const auth of bad) await expect(vaults.createCredential(v.id, { auth }), JSON.stringify(auth).slice(0, 80)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(vaults.createCredential('vlt_missing', { auth: { type: 'static_bearer', mcp_server_url: 'https://x.example.com', token: 't' } })).rejects.toBeInstanceOf(NotFoundError);
    expect((await vaults.listCredentials(v.id, { includeArchived: true })).data).toEqual([]);
  });

  it('updates only the fields given, keeps the type, and seals a new value under a new data key', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    const c = await vaults.createCredential(v.id, { display_name: 'lin', metadata: { a: '1' }, auth: oauth('https://linear.example.com/mcp') });
    const before = JSON.parse((await store.db.selectFrom('vault_credentials').select('secrets').where('id', '=', c.id).executeTakeFirstOrThrow()).secrets) as SealedFields;
    await expect(vaults.updateCredential(v.id, c.id, { auth: { type: 'static_bearer', token: 'x' } })).rejects.toThrow(/type cannot change/);
    const u = await vaults.updateCredential(v.id, c.id, { metadata: { b: '2' }, auth: { type: 'mcp_oauth', access_token: 'new-access', refresh: { scope: 'read write' } } });
    expect(u).toMatchObject({ display_name: 'lin', metadata: { a: '1', b: '2' }, auth: { expires_at: '2030-01-01T00:00:00Z', refresh: { client_id: 'client-1', scope: 'read write', token_endpoint_auth: { type: 'client_secret_post' } } } });
    const after = JSON.parse((await store.db.selectFrom('vault_credentials').select('secrets').where('id', '=', c.id).executeTakeFirstOrThrow()).secrets) as SealedFields;
    expect(after.access_token!.wrappedKey).not.toBe(before.access_token!.wrappedKey);
    expect(after.refresh_token).toEqual(before.refresh_token);
    const s = await secrets.mcpSecret([v.id], 'https://linear.example.com/mcp');
    expect(s).toMatchObject({ accessToken: 'new-access', refresh: { refreshToken: canary('refresh') } });
    // Dropping refresh drops its sealed values too.
    const dropped = await vaults.updateCredential(v.id, c.id, { auth: { type: 'mcp_oauth', refresh: null, expires_at: null } });
    expect(dropped.auth).toMatchObject({ refresh: null, expires_at: null });
    expect(Object.keys(JSON.parse((await store.db.selectFrom('vault_credentials').select('secrets').where('id', '=', c.id).executeTakeFirstOrThrow()).secrets) as object)).toEqual(['access_token']);
    await expect(vaults.updateCredential(v.id, c.id, { auth: { type: 'mcp_oauth', refresh: { refresh_token: 'r' } } })).rejects.toThrow(/no refresh settings/);
    const env = await vaults.createCredential(v.id, { auth: { type: 'environment_variable', secret_name: 'K', secret_value: 'v1', networking: { type: 'unrestricted' } } });
    expect((await vaults.updateCredential(v.id, env.id, { auth: { type: 'environment_variable', secret_value: 'v2', injection_location: { body: true } } })).auth).toMatchObject({ secret_name: 'K', networking: { type: 'unrestricted' }, injection_location: { header: true, body: true } });
    await expect(vaults.updateCredential(v.id, env.id, { auth: { type: 'environment_variable', secret_name: 'OTHER' } })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(vaults.getCredential(other(v.id), c.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refuses to change where or how a secret is sent without the secret, naming the fields and writing nothing', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    const env = await vaults.createCredential(v.id, { auth: { type: 'environment_variable', secret_name: 'K', secret_value: canary('env'), networking: { type: 'limited', allowed_hosts: ['api.example.com', 'b.example.com'] } } });
    const row = async () => store.db.selectFrom('vault_credentials').selectAll().where('id', '=', env.id).executeTakeFirstOrThrow();
    const before = await row();
    const redirect = { type: 'environment_variable', networking: { type: 'limited', allowed_hosts: ['evil-target.test'] }, injection_location: { header: true, body: true } };
    await expect(vaults.updateCredential(v.id, env.id, { display_name: 'x', metadata: { a: '1' }, auth: redirect })).rejects.toThrow(
      /^auth\.networking, auth\.injection_location: changing where or how credential vcrd_\w+'s secret is sent needs the secret in the same request: send auth\.secret_value/,
    );
    await expect(vaults.updateCredential(v.id, env.id, { auth: { type: 'environment_variable', networking: { type: 'unrestricted' } } })).rejects.toThrow(/^auth\.networking: /);
    await expect(vaults.updateCredential(v.id, env.id, { auth: { type: 'environment_variable', injection_location: { body: true } } })).rejects.toThrow(/^auth\.injection_location: /);
    await expect(vaults.updateCredential(v.id, env.id, { auth: { type: 'environment_variable', injection_location: { header: false } } })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(vaults.updateCredential(v.id, env.id, { auth: { type: 'environment_variable', injection_location: { header_names: ['X-Anything'] } } })).rejects.toThrow(/^auth\.injection_location: /);
    expect(await row()).toEqual(before);
    expect((await secrets.handSecrets([v.id]))[0]).toMatchObject({ value: canary('env'), hosts: ['api.example.com', 'b.example.com'] });
    // Sending the same settings again (in another order) changes nothing, so needs no value.
    await vaults.updateCredential(v.id, env.id, { auth: { type: 'environment_variable', networking: { type: 'limited', allowed_hosts: ['B.example.com', 'api.example.com'] }, injection_location: { header: true, body: false, header_names: ['Authorization'] } } });
    // A header that frames the request is no place for a secret.
    for (const name of ['Host', 'content-length', 'Proxy-Authorization', 'bad header']) {
      await expect(vaults.createCredential(v.id, { auth: { type: 'environment_variable', secret_name: 'H', secret_value: 'x', networking: { type: 'unrestricted' }, injection_location: { header_names: [name] } } }), name).rejects.toThrow(/header_names/);
    }
    // With the value, the owner of the secret may send it elsewhere.
    const moved = await vaults.updateCredential(v.id, env.id, { auth: { ...redirect, secret_value: 'new-value' } });
    expect(moved.auth).toMatchObject({ networking: { type: 'limited', allowed_hosts: ['evil-target.test'] }, injection_location: { header: true, body: true } });
    expect((await secrets.handSecrets([v.id]))[0]).toMatchObject({ value: 'new-value', hosts: ['evil-target.test'] });
  });

  it('never changes where an MCP or OAuth secret is sent on update: no URL, endpoint, client or resource, and the endpoint auth keeps its type', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    const c = await vaults.createCredential(v.id, { auth: oauth('https://linear.example.com/mcp') });
    const bearer = await vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: canary('bearer') } });
    for (const [cred, auth] of [
      [bearer, { type: 'static_bearer', mcp_server_url: 'https://evil-target.test/mcp' }],
      [c, { type: 'mcp_oauth', mcp_server_url: 'https://evil-target.test/mcp' }],
      [c, { type: 'mcp_oauth', refresh: { token_endpoint: 'https://evil-target.test/token' } }],
      [c, { type: 'mcp_oauth', refresh: { client_id: 'other' } }],
      [c, { type: 'mcp_oauth', refresh: { resource: 'https://evil-target.test' } }],
    ] as const) {
      await expect(vaults.updateCredential(v.id, cred.id, { auth }), JSON.stringify(auth)).rejects.toBeInstanceOf(InvalidInputError);
    }
    // client_secret_post stays post, whatever type comes with a new client secret.
    const u = await vaults.updateCredential(v.id, c.id, { auth: { type: 'mcp_oauth', refresh: { token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'new-client' } } } });
    expect(u.auth).toMatchObject({ refresh: { token_endpoint: 'https://auth.example.com/token', token_endpoint_auth: { type: 'client_secret_post' } } });
    expect(await secrets.mcpSecretById(c.id)).toMatchObject({ refresh: { tokenEndpointAuth: { type: 'client_secret_post', clientSecret: 'new-client' } } });
    // A credential that sends no client secret cannot start sending one (to wherever) on update.
    const none = await vaults.createCredential(v.id, { auth: { ...oauth('https://n.example.com/mcp'), refresh: { ...oauth('').refresh, token_endpoint_auth: { type: 'none' } } } });
    await expect(vaults.updateCredential(v.id, none.id, { auth: { type: 'mcp_oauth', refresh: { token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'x' } } } })).rejects.toThrow(
      /^auth\.refresh\.token_endpoint_auth: .*cannot change on update/,
    );
    expect((await vaults.getCredential(v.id, none.id)).auth).toMatchObject({ refresh: { token_endpoint_auth: { type: 'none' } } });
  });

  it('serves the MCP proxy: first vault in order, live credentials of live vaults only; refreshed tokens stored sealed', async () => {
    const a = await vaults.createVault({ display_name: 'a' });
    const b = await vaults.createVault({ display_name: 'b' });
    const url = 'https://mcp.example.com/mcp';
    const ca = await vaults.createCredential(a.id, { auth: { type: 'static_bearer', mcp_server_url: url, token: 'from-a' } });
    await vaults.createCredential(b.id, { auth: oauth(url) });
    expect(await secrets.mcpSecret([a.id, b.id], url)).toMatchObject({ vaultId: a.id, token: 'from-a' });
    expect(await secrets.mcpSecret([b.id, a.id], url)).toMatchObject({ vaultId: b.id, type: 'mcp_oauth' });
    expect(await secrets.mcpSecret([a.id, b.id], 'https://other.example.com/mcp')).toBeNull();
    await vaults.archiveCredential(a.id, ca.id);
    expect(await secrets.mcpSecret([a.id, b.id], url)).toMatchObject({ vaultId: b.id });
    const cb = (await secrets.mcpSecret([b.id], url))!;
    await secrets.saveRefreshedToken(cb.credentialId, { accessToken: canary('fresh'), expiresAt: '2031-01-01T00:00:00Z', refreshToken: canary('rotated') });
    expect(await secrets.mcpSecret([b.id], url)).toMatchObject({ accessToken: canary('fresh'), expiresAt: '2031-01-01T00:00:00Z', refresh: { refreshToken: canary('rotated') } });
    expect((await vaults.getCredential(b.id, cb.credentialId)).auth).toMatchObject({ expires_at: '2031-01-01T00:00:00Z' });
    expect(await rawDatabase()).not.toContain(CANARY);
    await vaults.archiveVault(b.id);
    expect(await secrets.mcpSecret([a.id, b.id], url)).toBeNull();
  });

  it("serves sandbox hands' egress proxies: one secret per name, first vault in order, hosts with their ports, live credentials only", async () => {
    const a = await vaults.createVault({ display_name: 'a' });
    const b = await vaults.createVault({ display_name: 'b' });
    const env = (secret_name: string, secret_value: string, networking: unknown, injection_location?: unknown) => ({ auth: { type: 'environment_variable', secret_name, secret_value, networking, ...(injection_location ? { injection_location } : {}) } });
    await vaults.createCredential(a.id, env('API_KEY', 'from-a', { type: 'limited', allowed_hosts: ['API.example.com:8443', 'api.example.com'] }));
    await vaults.createCredential(b.id, env('API_KEY', 'from-b', { type: 'unrestricted' }));
    await vaults.createCredential(b.id, env('OTHER', 'other-value', { type: 'unrestricted' }, { header: false, body: true }));
    await vaults.createCredential(b.id, env('NAMED', 'named-value', { type: 'unrestricted' }, { header_names: ['X-Api-Key', 'x-api-key', 'Authorization'] }));
    const gone = await vaults.createCredential(b.id, env('GONE', 'archived', { type: 'unrestricted' }));
    await vaults.archiveCredential(b.id, gone.id);
    await vaults.createCredential(b.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: 'not-an-env' } });
    expect(await secrets.handSecrets([a.id, b.id])).toEqual([
      { name: 'API_KEY', value: 'from-a', hosts: ['api.example.com:8443', 'api.example.com'], header: true, body: false },
      { name: 'OTHER', value: 'other-value', hosts: ['*'], header: false, body: true },
      { name: 'NAMED', value: 'named-value', hosts: ['*'], header: true, headerNames: ['x-api-key', 'authorization'], body: false },
    ]);
    expect((await secrets.handSecrets([b.id, a.id]))[0]).toMatchObject({ name: 'API_KEY', value: 'from-b', hosts: ['*'] });
    await vaults.archiveVault(b.id);
    expect((await secrets.handSecrets([b.id])).length).toBe(0);
  });

  it('binds each value to its row: a ciphertext copied onto another credential does not open', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    const x = await vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://x.example.com/mcp', token: 'x-token' } });
    const y = await vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://y.example.com/mcp', token: 'y-token' } });
    const xs = (await store.db.selectFrom('vault_credentials').select('secrets').where('id', '=', x.id).executeTakeFirstOrThrow()).secrets;
    await store.db.updateTable('vault_credentials').set({ secrets: xs }).where('id', '=', y.id).execute();
    await expect(secrets.mcpSecret([v.id], 'https://y.example.com/mcp')).rejects.toBeInstanceOf(MasterKeyMismatchError);
  });

  it('deletes a credential with its ciphertext, and a vault with its credentials', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    const c = await vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://x.example.com/mcp', token: 't' } });
    const c2 = await vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://y.example.com/mcp', token: 't' } });
    expect(await vaults.deleteCredential(v.id, c.id)).toEqual({ id: c.id, type: 'vault_credential_deleted' });
    await expect(vaults.getCredential(v.id, c.id)).rejects.toBeInstanceOf(NotFoundError);
    await vaults.deleteVault(v.id);
    expect(await store.db.selectFrom('vault_credentials').select('id').where('id', 'in', [c.id, c2.id]).execute()).toEqual([]);
  });

  it('refuses an unusable vault for a session, naming it', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    const gone = await vaults.createVault({ display_name: 'gone' });
    await vaults.archiveVault(gone.id);
    await expect(vaults.requireUsableVaults([v.id])).resolves.toBeUndefined();
    await expect(vaults.requireUsableVaults([v.id, 'vlt_nope'])).rejects.toThrow(/vault_ids: vault vlt_nope does not exist/);
    await expect(vaults.requireUsableVaults([gone.id])).rejects.toThrow(new RegExp(`${gone.id} is archived`));
  });

  it('rotates the master key in one transaction: data keys re-wrapped, values unchanged, the old key no longer opens them', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    await vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://x.example.com/mcp', token: 'x-token' } });
    await vaults.createCredential(v.id, { auth: oauth('https://y.example.com/mcp') });
    // A repository token of the git proxy's, sealed under the same master key, rotates with them.
    const session = await store.createSession({ title: 'repo' });
    const [repo] = await new RepositoryStore(store.db, master).add(session.id, [{ type: 'github_repository', url: 'https://github.com/a/b', authorization_token: 'repo-token' }]);
    const read = async () => (await store.db.selectFrom('vault_credentials').select(['id', 'secrets']).orderBy('id').execute()).map((r) => JSON.parse(r.secrets) as SealedFields);
    const before = await read();
    const next = newMasterKey();
    expect(await rotateMasterKey(store.db, master, next)).toEqual({ credentials: 2, repositoryTokens: 1, webhookKeys: 0, rewrapped: 5 });
    const after = await read();
    for (const [i, row] of after.entries()) {
      for (const [field, sealed] of Object.entries(row)) {
        const old = before[i]![field as keyof SealedFields]!;
        expect(sealed.value).toBe(old.value);
        expect(sealed.wrappedKey).not.toBe(old.wrappedKey);
        expect(sealed.masterKeyId).toBe(next.id);
      }
    }
    await expect(secrets.mcpSecret([v.id], 'https://x.example.com/mcp')).rejects.toBeInstanceOf(MasterKeyMismatchError);
    const fresh = new VaultSecrets(store.db, next);
    expect(await fresh.mcpSecret([v.id], 'https://x.example.com/mcp')).toMatchObject({ token: 'x-token' });
    expect(await fresh.mcpSecret([v.id], 'https://y.example.com/mcp')).toMatchObject({ accessToken: canary('access'), refresh: { refreshToken: canary('refresh') } });
    // Run again (interrupted before the key file was replaced): nothing left to do, nothing broken.
    expect(await rotateMasterKey(store.db, master, next)).toEqual({ credentials: 2, repositoryTokens: 1, webhookKeys: 0, rewrapped: 0 });
    expect(await new RepositoryStore(store.db, next).token(session.id, repo!.id)).toBe('repo-token');
    await expect(new RepositoryStore(store.db, master).token(session.id, repo!.id)).rejects.toBeInstanceOf(MasterKeyMismatchError);
    expect(await fresh.mcpSecret([v.id], 'https://x.example.com/mcp')).toMatchObject({ token: 'x-token' });
  });

  it('rolls a rotation back whole when one value does not open', async () => {
    const v = await vaults.createVault({ display_name: 'v' });
    await vaults.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://x.example.com/mcp', token: 'x-token' } });
    await new VaultStore(store.db, newMasterKey()).createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://z.example.com/mcp', token: 'z' } });
    const before = await store.db.selectFrom('vault_credentials').select(['id', 'secrets']).orderBy('id').execute();
    await expect(rotateMasterKey(store.db, master, newMasterKey())).rejects.toBeInstanceOf(MasterKeyMismatchError);
    expect(await store.db.selectFrom('vault_credentials').select(['id', 'secrets']).orderBy('id').execute()).toEqual(before);
  });
});

/** A vault id that is not the credential's. */
function other(id: string): string {
  return `${id}X`;
}
