import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '~/lib/prng';
import { type Rand, fakeId, pick } from '~/server/api/testing/fuzz-random';
import { primaryThreadId } from '~/lib/threads';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { checkLogInvariants } from '~/server/harness/testing/log-invariants';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { createSkill, createSkillVersion } from '~/server/commands/skill-commands';
import { createDeployment, runDeploymentNow } from '~/server/commands/deployment-commands';
import { REST_ROUTES, handleRest } from '~/server/rest/handler';
import type { Route } from '~/server/rest/route-table';
import type { Runtime } from '~/server/runtime';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';

/**
 * Hostile requests over every /v1 route: no 5xx, nothing written by a refused request, nothing let
 * through without credentials, and every log sound afterwards.
 */
const SEED = Number(process.env.PADDOCK_FUZZ_SEED ?? 20261202);
const COUNT = Number(process.env.PADDOCK_FUZZ_COUNT ?? 1_200) / 2;

let dir: string;
let store: SqliteSessionStore;
let rt: Runtime;
const woken = new Set<string>();
let realWake: (id: string) => Promise<void>;
let world: { apiKey: string; cookie: string; agents: string[]; envs: string[]; sessions: string[]; calls: string[]; vaults: string[]; credentials: Array<[string, string]>; resources: string[]; files: string[]; memory: Array<{ store: string; memories: string[]; versions: string[] }>; skills: Array<{ id: string; versions: string[] }>; deployments: string[]; runs: string[]; endpoints: string[]; deliveries: string[]; threads: string[]; hosted: string; envKey: string; envKeys: string[]; work: string[]; workToken: string };
/** Sent as every credential value: no answer may carry it back. */
const SECRET = 'SECRET-FUZZ-VALUE';

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-rest-fuzz-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir, env: { PADDOCK_MAX_BODY_BYTES: String(512 * 1024) } });
  await rt.agents.ensureDefaults();
  realWake = rt.harness.wake.bind(rt.harness);
  rt.harness.wake = (id: string) => {
    woken.add(id);
    return Promise.resolve();
  };
  const apiKey = (await rt.access.createApiKey('fuzz')).key;
  const signed = await rt.access.signIn(await rt.access.newSigninToken(), { host: 'localhost:3000', secure: false });
  const agent = await rt.agents.createAgent({ name: 'fuzzed', model: 'claude-sonnet-5-5', tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'write', permission_policy: { type: 'always_ask' } }] }] });
  const env = await rt.agents.createEnvironment({ name: 'fuzzed' });
  const sessions = [];
  for (let i = 0; i < 3; i++) sessions.push((await store.createSession({ title: `fuzz ${i}` })).id);
  const call = await store.emitEvents(sessions[0]!, [
    { type: 'user.message', content: [{ type: 'text', text: 'go' }] },
    { type: 'agent.tool_use', name: 'write', input: { file_path: 'a', content: 'b' }, model_tool_use_id: 'toolu_fuzz', evaluated_permission: 'ask' },
    { type: 'agent.custom_tool_use', name: 'lookup', input: {}, model_tool_use_id: 'toolu_fuzz2' },
  ]);
  // A child thread (multiagent) of one session, idle, that the thread routes act on (archive included).
  const child = 'sthr_01JZFUZZ000000000000000000';
  await store.emitEvents(sessions[1]!, [
    { type: 'session.thread_created', session_thread_id: child, agent_name: 'fuzzed', workflow_run_id: null },
    { type: 'session.thread_status_idle', session_thread_id: child, agent_name: 'fuzzed', stop_reason: { type: 'end_turn' }, stop_details: null },
    // The primary at rest too: a log the fuzz leaves alone ends settled, whichever requests it drew.
    { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null },
  ]);
  const threads = [...sessions.map(primaryThreadId), child];
  // A repository per session (its token must never show up in any row but its sealed one).
  const resources = [];
  for (const id of sessions) resources.push((await rt.repositories.add(id, [{ type: 'github_repository', url: 'https://github.com/a/b', authorization_token: 'FORGED' }]))[0]!.id);
  // Vaults the vault routes act on, and others whose credentials the credential routes act on.
  const vaults = [];
  for (let i = 0; i < 8; i++) vaults.push((await rt.vaults.createVault({ display_name: `fuzz ${i}` })).id);
  const credentials: Array<[string, string]> = [];
  for (let i = 0; i < 4; i++) {
    const v = (await rt.vaults.createVault({ display_name: `fuzz creds ${i}` })).id;
    for (let j = 0; j < 3; j++) credentials.push([v, (await rt.vaults.createCredential(v, { auth: { type: 'static_bearer', mcp_server_url: `https://mcp${j}.example.com/mcp`, token: SECRET } })).id]);
  }
  // A file sessions may mount (its row is all a file resource needs).
  const files = [(await rt.files.create({ filename: 'data.csv', mimeType: 'text/csv', size: 1, sha256: '0'.repeat(64), expiresAt: null, scopeId: null })).metadata.id];
  // Memory stores, each with memories (a past version apiece, so redact has something to take).
  const memory = [];
  for (let i = 0; i < 3; i++) {
    const store = (await rt.memory.createStore({ name: `fuzz ${i}` })).id;
    const memories = [];
    const versions = [];
    for (let j = 0; j < 3; j++) {
      const m = await rt.memory.createMemory(store, { path: `/notes/m${j}.md`, content: `m${j}` }, { type: 'api_actor', api_key_id: 'fuzz' });
      await rt.memory.updateMemory(store, m.id, { content: `m${j} v2` }, { type: 'api_actor', api_key_id: 'fuzz' });
      memories.push(m.id);
      versions.push(m.memory_version_id);
    }
    memory.push({ store, memories, versions });
  }
  // Skills with two versions each (a version route may delete one; the last is refused).
  const skills = [];
  for (let i = 0; i < 3; i++) {
    const files = (d: string) => [{ name: `s${i}/SKILL.md`, data: Buffer.from(`---\nname: s${i}\ndescription: fuzz ${d}\n---\n`) }];
    const s = await createSkill({ skills: rt.skills, blobs: rt.blobs }, files('one'), null);
    const v = await createSkillVersion({ skills: rt.skills, blobs: rt.blobs }, s.id, files('two'));
    skills.push({ id: s.id, versions: [s.latest_version_id, v.id] });
  }
  // Deployments (one scheduled, one by hand only), each with a run.
  const deployments = [];
  const runs = [];
  for (const schedule of [null, { type: 'cron', expression: '*/5 * * * *', timezone: 'Europe/Paris' }]) {
    const d = await createDeployment(rt, { name: 'fuzzed', agent: agent.id, environment_id: env.id, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }], schedule });
    deployments.push(d.id);
    runs.push((await runDeploymentNow(rt, d.id)).id);
  }
  // Webhook endpoints, and the deliveries the deployments above queued for them.
  const endpoints = [];
  for (let i = 0; i < 2; i++) endpoints.push((await rt.webhooks.createEndpoint({ url: `https://hooks${i}.example.com/in`, description: null, event_types: [] })).id);
  await rt.webhooks.emit('deployment.created', deployments[0]!);
  const deliveries = (await rt.webhooks.listDeliveries({ limit: 100 })).data.map((d) => d.id);
  // A self-hosted environment with a key, and work items of its own sessions (one queued, one acked).
  const hosted = (await rt.agents.createEnvironment({ name: 'hosted', config: { type: 'self_hosted' } })).id;
  const envKey = await rt.work.createKey(hosted, { name: 'fuzz' });
  const work = [];
  for (let i = 0; i < 2; i++) {
    const s = (await store.createSession({ title: `hosted ${i}`, environment_id: hosted })).id;
    sessions.push(s);
    work.push((await rt.work.needWorker(s, hosted)).id);
  }
  await rt.work.ack(hosted, work[1]!);
  const workToken = await rt.access.workToken(work[1]!);
  world = { hosted, envKey: envKey.key, envKeys: [envKey.id], work, workToken, apiKey, cookie: signed!.setCookie.split(';')[0]!, agents: [agent.id, 'agent_default'], envs: [env.id, 'env_default'], sessions, calls: call.slice(1).map((e) => e.id), vaults, credentials, resources, files, memory, skills, deployments, runs, endpoints, deliveries, threads };
});

afterAll(async () => {
  await rt.harness.close();
  await rt.hands.closeAll();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});


function hostile(r: Rand): unknown {
  return pick(r, [
    () => 42,
    () => -1,
    () => null,
    () => [],
    () => ({}),
    () => ({ __proto__: { admin: true }, constructor: { prototype: { polluted: true } } }),
    () => '',
    () => 'a\u0000b',
    () => '\ud800\udfff\ud800',
    () => '../../../../etc/passwd',
    () => '<script>alert(1)</script>',
    () => fakeId(r, 'sesn'),
    () => fakeId(r, 'sevt'),
    () => pick(r, world.calls),
    () => 'x'.repeat(pick(r, [1_000, 70_000, 600_000])),
  ])();
}

function idFor(r: Rand, route: Route, clean = false): string {
  if (!clean && r() < 0.15) return pick(r, ['', '..', '%2e%2e', 'sesn_' + 'A'.repeat(300), fakeId(r, 'sesn'), 'agent_nope', encodeURIComponent('<x>')]);
  if (route.path.startsWith('agents')) return pick(r, world.agents);
  // `<environment>/<item or key>` for an item's or a key's routes, as the credential routes do.
  if (route.path.includes(':wid')) return `${pick(r, [world.hosted, world.hosted, ...world.envs])}/${pick(r, [...world.work, 'work_nope'])}`;
  if (route.path.includes(':kid')) return `${world.hosted}/${pick(r, [...world.envKeys, 'envkey_nope'])}`;
  if (route.path.startsWith('environments/:id/')) return pick(r, [world.hosted, world.hosted, ...world.envs]);
  if (route.path.startsWith('environments')) return pick(r, world.envs);
  if (route.path.startsWith('vaults/:vault/')) return pick(r, world.credentials).join('/');
  if (route.path.startsWith('vaults')) return pick(r, world.vaults);
  if (route.path.startsWith('deployments')) return pick(r, world.deployments);
  if (route.path.startsWith('webhook_endpoints')) return pick(r, world.endpoints);
  if (route.path.startsWith('webhook_deliveries')) return pick(r, world.deliveries);
  if (route.path.startsWith('files')) return pick(r, world.files);
  if (route.path.startsWith('deployment_runs')) return pick(r, world.runs);
  if (route.path.startsWith('skills')) {
    const k = pick(r, world.skills);
    return route.path.includes(':version') ? `${k.id}/${pick(r, [...k.versions, 'latest', '1'])}` : k.id;
  }
  if (route.path.startsWith('memory_stores')) {
    // `<store>/<memory or version>`: a pair that belongs together, as the credential routes do.
    const m = pick(r, world.memory);
    if (route.path.includes(':mid')) return `${m.store}/${pick(r, m.memories)}`;
    if (route.path.includes(':vid')) return `${m.store}/${pick(r, m.versions)}`;
    return m.store;
  }
  // `<session>/<thread>`: when clean, one of that session's own threads; else any session's.
  if (route.path.includes(':tid')) {
    const session = pick(r, world.sessions);
    const own = [primaryThreadId(session), ...(session === world.sessions[1] ? [world.threads.at(-1)!] : [])];
    if (clean) return `${session}/${pick(r, own)}`;
    return `${session}/${r() < 0.1 ? pick(r, ['sthr_nope', '..', 'x'.repeat(300)]) : pick(r, world.threads)}`;
  }
  return pick(r, world.sessions);
}

function bodyFor(r: Rand, route: Route): unknown {
  const text = () => pick(r, ['hello', 'x\u0000y', 'y'.repeat(3_000)]);
  const p = route.path;
  if (p === 'agents') return { name: text(), model: pick(r, ['claude-sonnet-5-5', { id: 'm', speed: 'fast' }]), tools: [{ type: 'agent_toolset_20260401', default_config: { enabled: pick(r, [true, 'yes']) } }], skills: pick(r, [undefined, [{ type: 'anthropic', skill_id: 'x' }]]) };
  if (p === 'agents/:id') return { version: pick(r, [1, 2, 99]), system: text(), metadata: { k: pick(r, ['v', null]) } };
  if (p === 'environments') return { name: text(), config: pick(r, [{ type: 'cloud' }, { type: 'self_hosted' }, { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['http://x/'] } }]) };
  if (p === 'environments/:id') return { name: text(), config: { type: 'cloud', packages: { npm: ['$(rm -rf /)'] } } };
  if (p === 'sessions') return { agent: pick(r, [...world.agents, { type: 'agent', id: world.agents[0], version: 7 }, { type: 'agent_with_overrides', id: world.agents[0], system: text() }]), environment_id: pick(r, world.envs), initial_events: pick(r, [undefined, [{ type: 'user.message', content: [{ type: 'text', text: text() }] }], [{ type: 'agent.message', content: [] }]]), resources: pick(r, [undefined, [{ type: 'github_repository', url: 'https://github.com/a/b', authorization_token: 'FORGED' }], [{ type: 'file', file_id: pick(r, [...world.files, 'file_01UNKNOWN0000000000000000']), mount_path: pick(r, [undefined, 'x.csv', '/tmp/x']) }]]) };
  if (p === 'sessions/:id') return { title: text(), metadata: { a: 'b' }, agent: pick(r, [undefined, 'x']) };
  if (p === 'vaults') return { display_name: text(), metadata: pick(r, [undefined, { k: 'v' }, { k: 5 }]) };
  if (p === 'vaults/:id') return { display_name: pick(r, [text(), null, '']), metadata: { k: pick(r, ['v', null]) } };
  if (p === 'vaults/:vault/credentials') {
    return {
      auth: pick(r, [
        { type: 'static_bearer', mcp_server_url: pick(r, ['https://mcp0.example.com/mcp', 'javascript:alert(1)', `https://u:${SECRET}@x.example.com`]), token: SECRET },
        { type: 'environment_variable', secret_name: pick(r, ['OK_NAME', 'BAD NAME', '$(id)']), secret_value: SECRET, networking: pick(r, [{ type: 'unrestricted' }, { type: 'limited', allowed_hosts: ['http://x/'] }]) },
        { type: 'mcp_oauth', mcp_server_url: 'https://o.example.com/mcp', access_token: SECRET, refresh: { client_id: 'c', refresh_token: SECRET, token_endpoint: 'file:///etc/passwd', token_endpoint_auth: { type: 'client_secret_post', client_secret: SECRET } } },
      ]),
    };
  }
  if (p === 'vaults/:vault/credentials/:id') return { auth: pick(r, [{ type: 'environment_variable', secret_value: SECRET }, { type: 'static_bearer', token: SECRET }, { type: 'mcp_oauth', access_token: SECRET }]), display_name: text() };
  if (p === 'sessions/:id/resources') return pick(r, [{ type: 'github_repository', url: pick(r, ['https://github.com/a/b', 'file:///etc/passwd', 'https://u:p@h/x', 'https://h/']), mount_path: pick(r, [undefined, '/workspace/../x', '/etc', '/workspace/a/.git/hooks']), authorization_token: pick(r, ['FORGED', 'has space', '']) }, { type: 'file', file_id: pick(r, [...world.files, 'f', 'file_01UNKNOWN0000000000000000']), mount_path: pick(r, [undefined, null, 'a.csv', '/etc/passwd', '../x', '/mnt/session/uploads/a/../b', 'a\u0000b', 7]) }, { type: 'memory_store', memory_store_id: 'm' }]);
  if (p === 'webhook_endpoints') return { url: pick(r, ['https://hooks.example.com/x', 'http://127.0.0.1/x', 'file:///etc/passwd', 'https://u:p@x.example.com', 'javascript:alert(1)', '']), event_types: pick(r, [undefined, ['deployment.created'], ['nope'], 'deployment.created']), description: pick(r, [undefined, text(), 5]) };
  if (p === 'deployments') return { name: text(), agent: pick(r, [...world.agents, 'agent_nope', { type: 'agent_with_overrides', id: 'x' }]), environment_id: pick(r, world.envs), initial_events: pick(r, [[], [{ type: 'user.message', content: [{ type: 'text', text: text() }] }], [{ type: 'user.interrupt' }]]), schedule: pick(r, [undefined, { type: 'cron', expression: pick(r, ['* * * * *', '0 0 L * *', '@daily', '61 * * * *', '* * * * * *']), timezone: pick(r, ['UTC', 'Mars/Base', '']) }]), budget: pick(r, [undefined, { type: 'limit', max_list_cost: { amount: pick(r, ['1', '-1', '1.5', 1]), currency: pick(r, ['USD', 'EUR']) } }]), resources: pick(r, [undefined, [{ type: 'github_repository', url: 'https://github.com/a/b', authorization_token: SECRET }], [{ type: 'file', file_id: 'file_nope' }]]) };
  if (p === 'deployments/:id') return { name: pick(r, [text(), '', null]), schedule: pick(r, [null, { type: 'cron', expression: '0 0 * * 8', timezone: 'UTC' }]), initial_events: pick(r, [undefined, []]) };
  if (p === 'memory_stores') return { name: pick(r, [text(), '../x', 'a/b', '']), description: pick(r, [undefined, text()]), metadata: pick(r, [undefined, { k: 5 }]) };
  if (p === 'memory_stores/:id') return { name: pick(r, [text(), null, '..']), metadata: { k: pick(r, ['v', null]) } };
  if (p === 'memory_stores/:id/memories') return { path: pick(r, ['/a/../../etc/passwd', '/a\u0000b', 'relative', '/ok/new.md', '/notes/m0.md', '/notes']), content: pick(r, ['x', null, 'y'.repeat(110_000), 'a\u0000b']) };
  if (p === 'memory_stores/:id/memories/:mid') return { content: text(), path: pick(r, [undefined, '/../x', '/notes/m1.md']), precondition: pick(r, [undefined, { type: 'content_sha256', content_sha256: 'ab' }, { type: 'content_sha256', content_sha256: '0'.repeat(64) }]) };
  if (p === 'sessions/:id/resources/:rid') return { authorization_token: pick(r, ['FORGED', '', 'a b', 7]), url: pick(r, [undefined, 'https://evil.example/x']) };
  if (p === 'environments/:id/work/:wid/stop') return { force: pick(r, [true, false, 'yes', null]) };
  if (p === 'environments/:id/work/:wid') return { metadata: pick(r, [{ k: 'v' }, { k: null }, { k: 5 }, 'x']) };
  if (p === 'environments/:id/keys') return { name: pick(r, [text(), '', 7]) };
  if (p === 'sessions/:id/events') {
    return {
      events: [
        pick(r, [
          { type: 'user.message', content: [{ type: 'text', text: text() }] },
          { type: 'user.interrupt' },
          { type: 'user.tool_confirmation', tool_use_id: pick(r, world.calls), result: pick(r, ['allow', 'deny', 'maybe']) },
          { type: 'user.custom_tool_result', custom_tool_use_id: pick(r, world.calls), content: [{ type: 'text', text: 'FORGED' }] },
          { type: 'user.tool_result', tool_use_id: pick(r, world.calls), content: [{ type: 'text', text: 'FORGED' }] },
          { type: 'agent.message', content: [{ type: 'text', text: 'FORGED' }] },
        ]),
      ],
    };
  }
  return undefined;
}

/** A well-formed body for a route: mixed in, so the suite also proves what it should let through. */
function cleanBodyFor(r: Rand, route: Route): unknown {
  const p = route.path;
  if (p === 'agents') return { name: `agent ${Math.floor(r() * 1e6)}`, model: 'claude-sonnet-5-5' };
  if (p === 'agents/:id') return { version: 1, description: 'clean update' };
  if (p === 'environments') return { name: `env ${Math.floor(r() * 1e6)}`, config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['example.com'] } } };
  if (p === 'environments/:id') return { description: 'clean update' };
  if (p === 'environments/:id/work/:wid/stop') return { force: pick(r, [true, false]) };
  if (p === 'environments/:id/work/:wid') return { metadata: { team: 'fuzz' } };
  if (p === 'environments/:id/keys') return { name: 'clean key' };
  if (p === 'sessions') return { agent: pick(r, world.agents), environment_id: pick(r, world.envs) };
  if (p === 'sessions/:id') return { title: 'clean title', metadata: { a: 'b' } };
  if (p === 'sessions/:id/resources') return pick(r, [{ type: 'github_repository', url: 'https://github.com/a/c', authorization_token: 'FORGED' }, { type: 'file', file_id: pick(r, world.files), mount_path: `in/${Math.floor(r() * 1e9)}.csv` }]);
  if (p === 'sessions/:id/resources/:rid') return { authorization_token: 'FORGED' };
  if (p === 'sessions/:id/events') return { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] };
  if (p === 'vaults') return { display_name: `vault ${Math.floor(r() * 1e6)}`, metadata: { team: 'fuzz' } };
  if (p === 'webhook_endpoints') return { url: `https://hooks-${Math.floor(r() * 1e6)}.example.com/in`, event_types: ['deployment.created'] };
  if (p === 'deployments') return { name: `deployment ${Math.floor(r() * 1e6)}`, agent: pick(r, world.agents), environment_id: pick(r, world.envs), initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }], schedule: pick(r, [null, { type: 'cron', expression: '0 9 * * 1-5', timezone: 'UTC' }]) };
  if (p === 'deployments/:id') return { name: 'clean update', metadata: { a: 'b' }, budget: { type: 'limit', max_list_cost: { amount: '100', currency: 'USD' } } };
  if (p === 'memory_stores') return { name: `store ${Math.floor(r() * 1e6)}`, description: 'clean' };
  if (p === 'memory_stores/:id') return { description: 'clean update' };
  if (p === 'memory_stores/:id/memories') return { path: `/clean/${Math.floor(r() * 1e9)}.md`, content: 'clean' };
  if (p === 'memory_stores/:id/memories/:mid') return { content: `clean ${Math.floor(r() * 1e9)}` };
  if (p === 'vaults/:id') return { display_name: 'clean update', metadata: { team: null } };
  if (p === 'vaults/:vault/credentials') {
    const n = Math.floor(r() * 1e9);
    return pick(r, [
      { auth: { type: 'static_bearer', mcp_server_url: `https://mcp-${n}.example.com/mcp`, token: SECRET } },
      { auth: { type: 'environment_variable', secret_name: `KEY_${n}`, secret_value: SECRET, networking: { type: 'limited', allowed_hosts: ['api.example.com'] } } },
    ]);
  }
  if (p === 'vaults/:vault/credentials/:id') return { display_name: 'clean update', auth: { type: 'static_bearer', token: SECRET } };
  return undefined;
}

function mutate(r: Rand, body: unknown): unknown {
  if (r() < 0.35 || typeof body !== 'object' || body === null) return r() < 0.1 ? hostile(r) : body;
  const copy = structuredClone(body) as Record<string, unknown>;
  const key = pick(r, [...Object.keys(copy), 'unexpected', '__proto__']);
  if (r() < 0.3) delete copy[key];
  else copy[key] = hostile(r);
  return copy;
}

const HOST = { host: 'localhost:3000' };
/** Percent-escapes that do not decode: not hex, cut short, or bytes that are not UTF-8. */
const MALFORMED_ESCAPES = ['%ZZ', '%', '%2', '%C3%28', '%FF', '%E0%A4%A', '%80'];
function headersFor(r: Rand, route: Route): { headers: Record<string, string>; refuse: boolean } {
  const json = { 'content-type': 'application/json' };
  return pick(r, [
    // A worker's credentials: refused by every route that does not take them.
    () => ({ headers: { ...HOST, ...json, authorization: `Bearer ${world.envKey}` }, refuse: !route.callers?.environmentKey }),
    () => ({ headers: { ...HOST, ...json, authorization: `Bearer ${world.workToken}` }, refuse: !route.callers?.workItem }),
    () => ({ headers: { ...HOST, ...json, 'x-api-key': world.apiKey, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'managed-agents-2026-04-01,unknown-beta' }, refuse: false }),
    () => ({ headers: { ...HOST, ...json, authorization: `Bearer ${world.apiKey}` }, refuse: false }),
    () => ({ headers: { ...HOST, ...json, 'x-api-key': world.apiKey }, refuse: false }),
    () => ({ headers: { ...HOST, ...json }, refuse: true }),
    () => ({ headers: { ...HOST, ...json, 'x-api-key': 'pdk_wrong' }, refuse: true }),
    () => ({ headers: { ...HOST, ...json, authorization: 'Bearer ' }, refuse: true }),
    () => ({ headers: { ...HOST, ...json, origin: 'http://evil.example', cookie: world.cookie }, refuse: true }),
    // The owner's own browser session: the UI's, not a key for this API.
    () => ({ headers: { ...HOST, ...json, origin: 'http://localhost:3000', cookie: world.cookie }, refuse: true }),
    () => ({ headers: { host: 'rebind.attacker.example', ...json, 'x-api-key': world.apiKey }, refuse: true }),
  ])();
}

async function send(req: Request): Promise<{ status: number; body: unknown; requestId: string | null }> {
  const abort = new AbortController();
  const res = await handleRest(new Request(req, { signal: abort.signal }), { runtime: () => Promise.resolve(rt), maxBodyBytes: 512 * 1024, policy: { allowedHosts: [], allowedOrigins: [] } });
  let body: unknown = null;
  if (res.headers.get('content-type')?.includes('text/event-stream')) {
    abort.abort();
    await res.body?.cancel().catch(() => undefined);
  } else if (res.status === 200 && res.headers.get('content-type')?.startsWith('text/plain')) {
    // /v1/metrics: Prometheus's text format, not JSON.
    body = await res.text();
  } else if (res.status === 200 && res.headers.get('content-type') === 'application/zip') {
    // A skill version's archive: bytes, not JSON.
    body = `zip of ${(await res.arrayBuffer()).byteLength} bytes`;
  } else {
    body = JSON.parse(await res.text()) as unknown;
  }
  return { status: res.status, body, requestId: res.headers.get('request-id') };
}

async function snapshot(): Promise<string> {
  const q = (t: 'sessions' | 'agents' | 'agent_versions' | 'environments' | 'events') => store.db.selectFrom(t).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const sessions = await store.db.selectFrom('sessions').select(['id', 'last_seq', 'title', 'metadata', 'archived_at']).orderBy('id').execute();
  const agents = await store.db.selectFrom('agents').select(['id', 'version', 'archived_at']).orderBy('id').execute();
  const envs = await store.db.selectFrom('environments').select(['id', 'body', 'archived_at']).orderBy('id').execute();
  const vaults = await store.db.selectFrom('vaults').selectAll().orderBy('id').execute();
  const credentials = await store.db.selectFrom('vault_credentials').selectAll().orderBy('id').execute();
  const resources = await store.db.selectFrom('session_resources').select(['id', 'body', 'updated_at']).orderBy('id').execute();
  const tokens = await store.db.selectFrom('repository_tokens').select(['resource_id', 'sealed']).orderBy('resource_id').execute();
  const memoryStores = await store.db.selectFrom('memory_stores').selectAll().orderBy('id').execute();
  const memories = await store.db.selectFrom('memories').selectAll().orderBy('id').execute();
  const memoryVersions = await store.db.selectFrom('memory_versions').selectAll().orderBy('id').execute();
  const skills = await store.db.selectFrom('skills').selectAll().orderBy('id').execute();
  const skillVersions = await store.db.selectFrom('skill_versions').selectAll().orderBy('skill_id').orderBy('version').execute();
  const deployments = await store.db.selectFrom('deployments').selectAll().orderBy('id').execute();
  const deploymentRuns = await store.db.selectFrom('deployment_runs').selectAll().orderBy('id').execute();
  const webhookEndpoints = await store.db.selectFrom('webhook_endpoints').selectAll().orderBy('id').execute();
  const webhookDeliveries = await store.db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute();
  const threadArchives = await store.db.selectFrom('session_thread_archives').selectAll().orderBy('session_id').orderBy('thread_id').execute();
  const work = await store.db.selectFrom('work_items').selectAll().orderBy('id').execute();
  const envKeys = await store.db.selectFrom('environment_keys').select(['id', 'revoked_at']).orderBy('id').execute();
  return JSON.stringify({ work, envKeys, threadArchives, webhookEndpoints, webhookDeliveries, deployments, deploymentRuns, skills, skillVersions,  sessions, agents, envs, versions: (await q('agent_versions')).n, events: (await q('events')).n, vaults, credentials, resources, tokens, memoryStores, memories, memoryVersions });
}

/** A resource id for a path: mostly the session's own, sometimes another's or none at all. */
function ridFor(rand: Rand, id: string): string {
  const r = rand();
  if (r < 0.1) return pick(rand, ['sesrsc_nope', '..', fakeId(rand, 'sesn')]);
  return r < 0.25 ? pick(rand, world.resources) : (world.resources[world.sessions.indexOf(id)] ?? pick(rand, world.resources));
}

/**
 * A credential route's id is `<vault>/<credential>`: the pair it belongs to; a resource route's `:rid`
 * is picked for its session. Picks draw from `r`, so a seed replays a run.
 */
const url = (route: Route, id: string, r: Rand = Math.random) => {
  const [vault, cred] = route.path.includes(':vault') && id.includes('/') ? id.split('/') : [id, id];
  if (route.path.startsWith('skills')) {
    const [skillId, version] = id.includes('/') ? id.split('/') : [id, id];
    return `http://localhost:3000/v1/${route.path.replace(':id', encodeURIComponent(skillId!)).replace(':version', encodeURIComponent(version!))}`;
  }
  if (route.path.startsWith('memory_stores')) {
    const [storeId, sub] = id.includes('/') ? id.split('/') : [id, id];
    const p = route.path.replace(':id', encodeURIComponent(storeId!)).replace(':mid', encodeURIComponent(sub!)).replace(':vid', encodeURIComponent(sub!));
    return `http://localhost:3000/v1/${p}`;
  }
  if (route.path.startsWith('environments/:id/') && id.includes('/')) {
    const [env, sub] = id.split('/');
    return `http://localhost:3000/v1/${route.path.replace(':id', encodeURIComponent(env!)).replace(':wid', encodeURIComponent(sub!)).replace(':kid', encodeURIComponent(sub!))}`;
  }
  const path = route.path.replace(':vault', encodeURIComponent(vault!)).replace(':id', encodeURIComponent(cred!));
  const withRid = path.includes(':rid') ? path.replace(':rid', encodeURIComponent(ridFor(r, id))) : path;
  if (!withRid.includes(':tid')) return `http://localhost:3000/v1/${withRid}`;
  // A thread route's id is `<session>/<thread>` (see idFor), or a session's alone: then any thread.
  const [session, thread] = id.includes('/') ? id.split('/') : [id, pick(r, world.threads)];
  return `http://localhost:3000/v1/${route.path.replace(':id', encodeURIComponent(session!)).replace(':tid', encodeURIComponent(thread!))}`;
};

describe('the /v1 API under attack', () => {
  it("answers a malformed percent-escape in any segment of every route 400 in the API's shape, with a key or without, and writes nothing", async () => {
    const before = await snapshot();
    const problems: string[] = [];
    for (const route of REST_ROUTES) {
      const segments = new URL(url(route, pick(Math.random, world.sessions))).pathname.split('/').slice(2);
      for (const bad of MALFORMED_ESCAPES) {
        // Each segment in turn carries the bad escape (appended, so the route would otherwise match).
        for (let at = 0; at < segments.length; at++) {
          const path = segments.map((seg, i) => (i === at ? `${seg}${bad}` : seg)).join('/');
          for (const key of [world.apiKey, undefined]) {
            const headers = { ...HOST, 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) };
            const res = await send(new Request(`http://localhost:3000/v1/${path}`, { method: route.method, headers, ...(route.method === 'POST' ? { body: '{}' } : {}) }));
            const b = res.body as { type?: string; error?: { type?: string } } | null;
            if (res.status !== 400 || b?.type !== 'error' || b.error?.type !== 'invalid_request_error' || !res.requestId) problems.push(`${route.method} /v1/${path} ${key ? 'with a key' : 'without'}: ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(await snapshot()).toBe(before);
  });

  it('refuses every route to a caller without credentials, with the API error shape and a request-id (a new unprotected route fails here)', async () => {
    expect(REST_ROUTES.length).toBeGreaterThan(20);
    const before = await snapshot();
    for (const route of REST_ROUTES) {
      const json = { ...HOST, 'content-type': 'application/json' };
      const owner = { ...json, cookie: world.cookie, origin: 'http://localhost:3000' };
      for (const headers of [json, { ...json, 'x-api-key': 'pdk_wrong' }, { ...json, authorization: 'Bearer sk-ant-nope' }, { ...owner, cookie: 'paddock_session_3000=forged.jwt.value' }, owner]) {
        const res = await send(new Request(url(route, pick(Math.random, world.sessions)), { method: route.method, headers, ...(route.method === 'POST' ? { body: '{}' } : {}) }));
        expect(res.status, `${route.method} ${route.path} with ${JSON.stringify(headers)}`).toBe(401);
        expect(res.body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
        expect(res.requestId).toMatch(/^req_/);
      }
    }
    expect(await snapshot()).toBe(before);
  });

  it(`answers ${COUNT} hostile requests over every route with 0 5xx, 0 partial writes and every error in the API's shape`, { timeout: 240_000 }, async () => {
    const r = mulberry32(SEED);
    const fivexx: string[] = [];
    const partial: string[] = [];
    const letThrough: string[] = [];
    const badShape: string[] = [];
    const echoed: string[] = [];
    const leaked: string[] = [];
    const seen = new Set<string>();
    // What got through: hostile input must not be all that is sent, or every route could refuse
    // everything and pass. A floor of accepted requests, on most routes, keeps the suite honest.
    const accepted = new Map<string, number>();
    const sealed = await store.db.selectFrom('repository_tokens').selectAll().execute();
    expect(sealed.length).toBe(world.resources.length);
    expect(JSON.stringify(sealed)).not.toContain('FORGED');
    // Every route's first request is well formed, on a world whose deletes and archives come last.
    const destructive = (route: Route) => route.method === 'DELETE' || /\/(archive|redact|stop)$/.test(route.path);
    const firstPass = [...REST_ROUTES].sort((a, b) => Number(destructive(a)) - Number(destructive(b)));
    for (let i = 0; i < COUNT; i++) {
      const first = i < firstPass.length;
      const route = first ? firstPass[i]! : i < REST_ROUTES.length * 8 ? REST_ROUTES[i % REST_ROUTES.length]! : pick(r, REST_ROUTES);
      seen.add(`${route.method} ${route.path}`);
      // Well formed (the credential the route takes, its method, a valid body): each route's first
      // request, then one in four; the rest hostile.
      const clean = first || r() < 0.25;
      const credential: Record<string, string> = route.callers?.apiKey === false ? { authorization: `Bearer ${world.envKey}` } : { 'x-api-key': world.apiKey };
      const { headers, refuse } = clean ? { headers: { ...HOST, 'content-type': 'application/json', ...credential }, refuse: false } : headersFor(r, route);
      const method = !clean && r() < 0.05 ? pick(r, ['PUT', 'PATCH', 'GET', 'DELETE']) : route.method;
      const raw = clean ? null : pick(r, [null, null, null, null, null, null, 'not json', '{"events":', '[]', '\u0000']);
      const body = raw ?? JSON.stringify((clean ? cleanBodyFor(r, route) : mutate(r, bodyFor(r, route))) ?? {});
      const query = first ? '' : clean ? pick(r, ['', '?limit=5']) : pick(r, ['', '', '?limit=5', '?limit=0', '?limit=abc', '?page=garbage', '?order=sideways', '?types[]=user.message', '?types[]=nope', '?version=1', '?statuses[]=idle', '?include_archived=maybe', '?event_deltas[]=agent.message', '?created_at[gt]=yesterday']);
      const req = new Request(url(route, idFor(r, route, clean), r) + query, { method, headers, ...(method === 'POST' || method === 'PUT' || method === 'PATCH' ? { body } : {}) });
      const before = await snapshot();
      const res = await send(req);
      const what = `#${i} ${method} ${route.path}${query} ${JSON.stringify(headers).slice(0, 100)} ${body.slice(0, 160)}`;
      if (JSON.stringify(res.body).includes(SECRET)) echoed.push(what);
      if (res.status < 300) accepted.set(`${route.method} ${route.path}`, (accepted.get(`${route.method} ${route.path}`) ?? 0) + 1);
      // A token sent in ('FORGED') is never served back, whatever route and answer.
      if (JSON.stringify(res.body).includes('FORGED')) leaked.push(`${res.status} ${what}`);
      if (res.status >= 500) fivexx.push(`${res.status} ${what} ${JSON.stringify(res.body)}`);
      if (refuse && res.status < 400) letThrough.push(`${res.status} ${what}`);
      if (res.status >= 400) {
        if ((await snapshot()) !== before) partial.push(`${res.status} ${what}`);
        const b = res.body as { type?: string; error?: { type?: string; message?: string } } | null;
        if (b?.type !== 'error' || typeof b.error?.type !== 'string' || typeof b.error.message !== 'string' || !res.requestId) badShape.push(`${res.status} ${what}`);
      }
    }
    expect(fivexx).toEqual([]);
    expect(partial).toEqual([]);
    expect(letThrough).toEqual([]);
    expect(badShape).toEqual([]);
    expect(echoed, 'a credential value in an answer').toEqual([]);
    expect(leaked).toEqual([]);
    expect(seen.size).toBe(REST_ROUTES.length);
    const acceptedCount = [...accepted.values()].reduce((a, b) => a + b, 0);
    expect(acceptedCount, 'requests accepted').toBeGreaterThanOrEqual(COUNT / 10);
    // Most routes take their first, well-formed request (over 40 seeds: 85 to 94 of 101); the rest
    // need what JSON cannot carry (an upload) or a world the earlier requests changed.
    const refusedAll = REST_ROUTES.map((route) => `${route.method} ${route.path}`).filter((k) => !accepted.has(k));
    expect(accepted.size, `routes that accepted no request: ${refusedAll.join(', ')}`).toBeGreaterThanOrEqual(Math.ceil(REST_ROUTES.length * 0.75));

    rt.harness.wake = realWake;
    for (const id of [...woken, ...world.sessions]) await rt.harness.wake(id);
    const all = await store.listSessions({ limit: 200 });
    for (const s of all.data) {
      const events = await store.getEvents(s.id);
      expect(JSON.stringify(events)).not.toContain('FORGED');
      // A self-hosted session at rest may still wait on its worker (calls without results): not settled.
      if (s.id !== world.sessions[0]) expect(checkLogInvariants(events, { settled: s.environment_id !== world.hosted }), `session ${s.id}`).toEqual([]);
    }
    expect(JSON.stringify(await store.db.selectFrom('sessions').select('extra').execute())).not.toContain('FORGED');
    // Tokens were accepted (sealed: see the check before the run), and never kept or served in the clear.
    expect(JSON.stringify(await store.db.selectFrom('repository_tokens').selectAll().execute())).not.toContain('FORGED');
    expect(JSON.stringify(await store.db.selectFrom('session_resources').selectAll().execute())).not.toContain('FORGED');
  });
});
