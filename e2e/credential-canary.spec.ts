import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { E2E_API_KEY, expect, signIn, test } from '~/e2e/auth';
import { enqueue } from '~/e2e/fake';
import { OwnServer } from '~/e2e/own-server';
import { send } from '~/e2e/session-page';
import { shoot } from '~/e2e/shots';
import { toolUseResponse, textResponse } from '~/server/harness/testing/fake-messages-api';
import { sandboxPolicy } from '~/server/hands/sandbox/policy';
import { type EchoServers, startEchoServers } from '~/server/hands/testing/https-echo';
import { type BearerGate, startBearerGate } from '~/server/proxy/testing/bearer-gate';
import { expectClean, processText, readTree } from '~/server/proxy/testing/canary-scan';
import { type EverythingServer, startEverythingServer } from '~/server/proxy/testing/everything-server';
import { type GitServer, startGitServer } from '~/server/proxy/testing/git-server';
import { FAKE_URL, port } from '~/e2e/ports';

/**
 * The credential canary in a browser: one secret, given to Paddock only through `/v1` (a vault's
 * MCP bearer token and `environment_variable`, a repository's token), used for real in a session a
 * signed-in Chromium tab follows (an MCP call through the proxy, a clone, a push, an HTTPS call
 * from the hand), then looked for in everything the browser received (every response, every
 * server-sent event, the IndexedDB mirror, the page), everything the SDK received, the hand's
 * files and processes, and the server's log: nowhere.
 */

const PORT = port(3215);
let dir: string;
let server: OwnServer;
let everything: EverythingServer;
let gate: BearerGate;
let gitServer: GitServer;
let echo: EchoServers;
let echoToken = 'not-yet';

test.beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-e2e-canary-'));
  [everything, gitServer, echo] = await Promise.all([startEverythingServer(), startGitServer('not-yet'), startEchoServers(['127.0.0.2'], () => echoToken)]);
  gate = await startBearerGate({ upstream: everything.base, token: 'not-yet' });
  // The server trusts the test hosts' certificates as an operator's NODE_EXTRA_CA_CERTS would make it.
  const caFile = path.join(dir, 'test-cas.pem');
  fs.writeFileSync(caFile, `${gitServer.ca}\n${fs.readFileSync(echo.caFile, 'utf8')}`);
  server = new OwnServer(
    PORT,
    {
      PADDOCK_DATA_DIR: path.join(dir, 'data'),
      PADDOCK_WORKSPACES_DIR: path.join(dir, 'hands'),
      ANTHROPIC_API_KEY: 'e2e-test-key',
      ANTHROPIC_BASE_URL: FAKE_URL,
      PADDOCK_DEFAULT_HAND: 'sandbox',
      PADDOCK_WARM_POOL: '0',
      PADDOCK_LOG_LEVEL: 'debug',
      NODE_EXTRA_CA_CERTS: caFile,
    },
    undefined,
    { captureLog: true },
  );
  await server.start();
});

test.afterAll(async () => {
  await server?.stop().catch(() => server.kill());
  await Promise.all([gate?.close(), everything?.close(), gitServer?.close(), echo?.close()]);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('a secret used for MCP, git and an HTTPS call in a session a browser follows reaches nothing the browser, the SDK, the hand or the log saw', async ({ browser }) => {
  test.setTimeout(120_000);
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  gate.token = canary;
  gitServer.setToken(canary);
  echoToken = canary;

  // What the SDK reads off the wire.
  const wire: string[] = [];
  const client = new Anthropic({
    apiKey: E2E_API_KEY,
    baseURL: server.url,
    maxRetries: 0,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      const text = await res.text();
      wire.push(text);
      return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
    },
  });
  const repoUrl = await gitServer.createRepo('widgets', { 'README.md': 'widgets here\n' });
  const environment = await client.beta.environments.create({ name: 'canary', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['127.0.0.2'] } } });
  const vault = await client.beta.vaults.create({ display_name: 'canary' });
  await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'static_bearer', mcp_server_url: gate.url, token: canary } });
  await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'environment_variable', secret_name: 'API_TOKEN', secret_value: canary, networking: { type: 'limited', allowed_hosts: [new URL(echo.https['127.0.0.2']!).host] } } });
  const agent = await client.beta.agents.create({
    name: 'canary',
    model: 'claude-e2e-model',
    tools: [
      { type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_allow' } } },
      { type: 'mcp_toolset', mcp_server_name: 'gate', default_config: { permission_policy: { type: 'always_allow' } } },
    ],
    mcp_servers: [{ type: 'url', name: 'gate', url: gate.url }],
  });
  const session = await client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    vault_ids: [vault.id],
    resources: [{ type: 'github_repository', url: repoUrl, authorization_token: canary }],
  });

  // The browser: every response body and every server-sent event it receives.
  const context = await browser.newContext();
  const page = await context.newPage();
  const received: string[] = [];
  page.on('response', (res) => {
    void res
      .text()
      .then((t) => received.push(t))
      .catch(() => undefined); // a stream still open: its events come through CDP below
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  let events = 0;
  cdp.on('Network.eventSourceMessageReceived', (m) => {
    events += 1;
    received.push(m.data);
  });
  await signIn(page, server.url);
  await page.goto(`${server.url}/s/${session.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');

  await enqueue(
    toolUseResponse('mcp__gate__echo', { message: 'hello through the proxy' }),
    toolUseResponse('bash', { command: 'cd widgets && git log --format=%s && echo change > change.txt && git add change.txt && git -c user.name=agent -c user.email=agent@example.com commit -q -m "from the agent" && git push -q origin HEAD:refs/heads/agent-push 2>&1 && echo PUSHED' }),
    toolUseResponse('bash', { command: `echo "placeholder: $API_TOKEN"; curl -sS -m 20 -H "Authorization: Bearer $API_TOKEN" ${echo.https['127.0.0.2']}/` }),
    textResponse('All three done.'),
  );
  await send(page, 'echo, push, and call the API');
  await expect(page.getByTestId('agent-message').last()).toContainText('All three done.', { timeout: 60_000 });
  const results = page.getByTestId('tool-result');
  await expect(results.filter({ hasText: 'Echo: hello through the proxy' })).toHaveCount(1);
  await expect(results.filter({ hasText: 'PUSHED' })).toHaveCount(1);
  await expect(results.filter({ hasText: '"authorized":true' })).toHaveCount(1);
  await shoot(page, 'credential-canary');

  // It was really used, upstream of every proxy.
  expect(gate.seenAuth).toContain(`Bearer ${canary}`);
  expect(gitServer.authorizations).toContain(`Basic ${Buffer.from(`x-access-token:${canary}`).toString('base64')}`);
  expect(echo.seen.map((r) => r.authorization)).toContain(`Bearer ${canary}`);

  // The browser: responses, server-sent events, its IndexedDB mirror, the page itself.
  expect(events).toBeGreaterThan(0);
  expectClean('responses and server-sent events the browser received', received.join('\n'), canary, 'Echo: hello through the proxy');
  const mirror = await page.evaluate(
    () =>
      new Promise<string>((resolve, reject) => {
        const open = indexedDB.open('paddock-mirror');
        open.onerror = () => reject(new Error('cannot open the mirror'));
        open.onsuccess = () => {
          const db = open.result;
          const names = [...db.objectStoreNames];
          const tx = db.transaction(names, 'readonly');
          const out: Record<string, unknown> = {};
          for (const n of names) {
            const all = tx.objectStore(n).getAll();
            all.onsuccess = () => {
              out[n] = all.result as unknown;
            };
          }
          tx.oncomplete = () => resolve(JSON.stringify(out));
        };
      }),
  );
  expectClean('the IndexedDB mirror', mirror, canary, 'PUSHED');
  expectClean('the page', await page.content(), canary, 'All three done.');

  // The SDK's view: every answer it read, and the event list.
  const listed: unknown[] = [];
  for await (const e of client.beta.sessions.events.list(session.id)) listed.push(e);
  expectClean('/v1 events list', JSON.stringify(listed), canary, 'placeholder: fake_value_');
  expectClean('SDK responses', wire.join('\n'), canary, session.id);

  // The hand: its files (the clone's .git included), tmp and HOME; every process under the server.
  const handsDir = path.join(dir, 'hands');
  expectClean('hand files', readTree(handsDir), canary, 'change.txt');
  const workspace = fs.realpathSync(path.join(handsDir, session.id, 'sandbox-1'));
  const { tmpDir } = sandboxPolicy({ workspace, dataDir: path.join(dir, 'data') });
  expectClean('hand tmp and HOME', `${readTree(tmpDir)}\n${readTree(`${tmpDir}.srt`)}`, canary, `${tmpDir}/home/`);
  expectClean('processes (cmdline and environ)', processText(server.pid).text, canary, /API_TOKEN=fake_value_/);

  // The server's log, at debug level.
  expectClean('server log', server.log.join(''), canary, 'git proxy request');
  await context.close();
});
