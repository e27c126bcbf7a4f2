import { PROGRAM_HEADERS, expect, signIn, test } from '~/e2e/auth';
import pg from 'pg';
import { enqueue, resetFake } from '~/e2e/fake';
import { mirroredSeqs } from '~/e2e/mirror';
import { OwnServer } from '~/e2e/own-server';
import { type PrivatePostgres, createPrivatePostgres } from '~/server/session/testing/private-postgres';
import { FAKE_URL, port } from '~/e2e/ports';

/**
 * The app on a PostgreSQL of its own (a private cluster, never the shared :5432 one). With a
 * session page open and the agent mid-answer, PostgreSQL is stopped: the page says the database is
 * unreachable and keeps showing its local copy, and a message sent meanwhile is refused visibly.
 * PostgreSQL is started again: the banner goes, and the session finishes the answer it was on.
 */
const PORT = port(3216);
const LATE_PORT = port(3217);
let cluster: PrivatePostgres;
let server: OwnServer;
let late: OwnServer | null = null;
const env = (name: string) => ({
  DATABASE_URL: cluster.url(),
  PADDOCK_DATA_DIR: `${process.env.E2E_DATA_DIR ?? '/tmp/paddock-e2e'}/${name}`,
  ANTHROPIC_API_KEY: 'e2e-test-key',
  ANTHROPIC_BASE_URL: FAKE_URL,
  PADDOCK_DEFAULT_HAND: 'memory',
  PADDOCK_WARM_POOL: '0',
  PADDOCK_SWEEP_MS: '250',
  PADDOCK_RETRY_BASE_MS: '50',
});

test.describe.configure({ timeout: 120_000 });
test.beforeAll(async () => {
  cluster = await createPrivatePostgres();
  console.log(`[db-outage] private cluster: initdb ${cluster.timings.initdbMs} ms, first start ${cluster.timings.startMs} ms`);
  server = new OwnServer(PORT, env('db-outage'));
  await server.start();
});
test.afterAll(async () => {
  await server?.kill();
  await late?.kill();
  await cluster?.cleanup();
});
test.beforeEach(async () => resetFake());
test.use({ baseURL: `http://127.0.0.1:${PORT}` });

test('PostgreSQL stops mid-answer: the page shows the outage, refuses a send visibly, and the session completes once it is back', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  const id = page.url().split('/s/')[1]!;
  await expect(page.getByTestId('connection')).toHaveText('live');
  const banner = page.getByTestId('store-outage');
  await expect(banner).toHaveCount(0);

  await enqueue(
    {
      kind: 'message',
      steps: [
        { kind: 'text', text: Array.from({ length: 60 }, (_, i) => `w${i}`).join(' '), chunks: 60 },
        { kind: 'tool_use', name: 'write', input: { file_path: 'note.md', content: 'alpha' }, id: 'toolu_e2e_w1' },
      ],
      chunkDelayMs: 50,
    },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'read', input: { file_path: 'note.md' }, id: 'toolu_e2e_r1' }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'The note says alpha, written across the outage.' }] },
  );
  await page.getByTestId('composer-input').fill('write a note and read it back');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('streaming')).toContainText('w3');

  // ── PostgreSQL goes away ──
  const down = Date.now();
  // The banner may show before pg_ctl has seen the shutdown through: wait for both at once.
  const stopped = cluster.stop('fast').then(() => Date.now() - down);
  await expect(banner).toBeVisible();
  const bannerMs = Date.now() - down;
  const stopMs = await stopped;
  await expect(banner).toHaveAttribute('role', 'status');
  await expect(banner).toContainText('database is unreachable');
  await expect(banner).toContainText('copy of this session saved in your browser');
  await expect(banner).toContainText('resumes by itself');
  // The page still shows what it had: the local copy.
  await expect(page.getByTestId('user-message')).toHaveText(['write a note and read it back']);

  // A message sent now is refused, and the page says so (the text stays in the box).
  await page.getByTestId('composer-input').fill('sent while the database is down');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('composer-error')).toContainText('Not sent: the database is unreachable');
  await expect(page.getByTestId('composer-input')).toHaveValue('sent while the database is down');

  // Down for longer than the rest of the stream: the answer arrives while the database is away.
  await page.waitForTimeout(Math.max(0, 4_000 - (Date.now() - down)));
  await expect(banner).toBeVisible();

  // ── PostgreSQL is back ──
  await cluster.start();
  const up = Date.now();
  await expect(banner).toHaveCount(0, { timeout: 15_000 });
  const bannerGoneMs = Date.now() - up;
  await expect(page.getByTestId('agent-message').last()).toHaveText('The note says alpha, written across the outage.', { timeout: 30_000 });
  await expect(page.getByTestId('status')).toHaveText('idle');
  const completedMs = Date.now() - up;
  await expect(page.getByTestId('connection')).toHaveText('live');

  // The log: one user message (the refused one is not in it), both tools ran once, and the tab's
  // mirror holds it all without gap or duplicate.
  const res = await fetch(`http://127.0.0.1:${PORT}/api/trpc/events.list?input=${encodeURIComponent(JSON.stringify({ sessionId: id }))}`, { headers: PROGRAM_HEADERS });
  const events = ((await res.json()) as { result: { data: Array<{ seq: number; type: string; is_error?: boolean }> } }).result.data;
  expect(events.filter((e) => e.type === 'user.message')).toHaveLength(1);
  expect(events.filter((e) => e.type === 'agent.tool_result').map((e) => e.is_error ?? false)).toEqual([false, false]);
  expect(events.at(-1)?.type).toBe('session.status_idle');
  await expect.poll(async () => (await mirroredSeqs(page, id)).length).toBe(events.length);
  expect(await mirroredSeqs(page, id)).toEqual(events.map((e) => e.seq));

  console.log(
    `[db-outage] outage ${up - down} ms (pg_ctl stop ${stopMs} ms); banner shown ${bannerMs} ms after the stop began, gone ${bannerGoneMs} ms after the start; session idle with its answer ${completedMs} ms after the start`,
  );
});

test("with PostgreSQL down, the hands list and a server-side hand's files say they are as last recorded, and the notes go once it is back", async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'write', input: { file_path: 'kept.md', content: 'kept' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Written.' }] },
  );
  await page.getByTestId('composer-input').fill('write a file');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('agent-message').last()).toHaveText('Written.', { timeout: 30_000 });
  await expect(page.locator('[data-testid=file-node][data-path="kept.md"]')).toBeVisible();
  await expect(page.getByTestId('hands-stale')).toHaveCount(0);

  await cluster.stop('fast');
  await expect(page.getByTestId('store-outage')).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId('hands-stale')).toContainText('As last recorded: the database is unreachable');
  await expect(page.getByTestId('files-stale')).toContainText('The database is unreachable: these are the files as last listed');
  await expect(page.locator('[data-testid=file-node][data-path="kept.md"]')).toBeVisible();

  await cluster.start();
  await expect(page.getByTestId('store-outage')).toHaveCount(0, { timeout: 15_000 });
  await expect(page.getByTestId('hands-stale')).toHaveCount(0);
  await expect(page.getByTestId('files-stale')).toHaveCount(0);
});

test('a server started while PostgreSQL is down comes up, answers 503 naming the database, and starts by itself once it is back', async ({ page }) => {
  // Only the server under test may hold a LISTEN connection: the count below is its own.
  await server.kill();
  await cluster.stop('fast');
  // Ready means the home page renders: the API cannot answer yet.
  late = new OwnServer(LATE_PORT, env('db-outage-late'), '/');
  const t0 = Date.now();
  await late.start();
  const upMs = Date.now() - t0;

  const res = await fetch(`${late.url}/api/trpc/sessions.list?input=${encodeURIComponent(JSON.stringify({}))}`, { headers: PROGRAM_HEADERS });
  expect(res.status).toBe(503);
  expect(((await res.json()) as { error: { message: string } }).error.message).toContain('the session store (PostgreSQL) is unreachable');
  await page.goto(`${late.url}/`);
  await expect(page.getByTestId('store-outage')).toContainText('The database is unreachable');
  await expect(page.getByTestId('offline-banner')).toHaveCount(0);
  await expect(page.getByTestId('new-session')).toBeDisabled();
  // No request reaches the server from here on until its runtime is up.
  await page.goto('about:blank');

  await cluster.start();
  const back = Date.now();
  const listening = async () => {
    const c = new pg.Client({ connectionString: cluster.url() });
    await c.connect();
    try {
      const { rows } = await c.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where application_name = 'paddock-listen'`);
      return rows[0]!.n;
    } finally {
      await c.end();
    }
  };
  // The runtime (its store, LISTEN connection and sweeper) started without waiting for a request.
  await expect.poll(listening, { timeout: 15_000, intervals: [100] }).toBe(1);
  const startedMs = Date.now() - back;

  // Signing in needs the database: only now can the owner open the sign-in link of this server.
  await signIn(page, late.url);
  await expect(page.getByTestId('store-outage')).toHaveCount(0);
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('connection')).toHaveText('live');
  console.log(`[db-outage] server started with the database down: up in ${upMs} ms (503s meanwhile); runtime started ${startedMs} ms after the database came back`);
});
