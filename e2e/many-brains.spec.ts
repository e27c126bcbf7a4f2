import { randomBytes } from 'node:crypto';
import { PROGRAM_HEADERS, expect, test } from '~/e2e/auth';
import pg from 'pg';
import { enqueue, resetFake } from '~/e2e/fake';
import { mirroredSeqs } from '~/e2e/mirror';
import { FailoverProxy } from '~/e2e/failover-proxy';
import { OwnServer } from '~/e2e/own-server';
import { FAKE_URL, port } from '~/e2e/ports';

/**
 * Two server instances share one PostgreSQL behind one origin. Instance A is SIGKILLed mid-turn;
 * B's sweeper picks the session up once A's lease expires and finishes the turn; the browser that
 * followed A reconnects (through the same origin) to B, and its mirror has no gap and no duplicate.
 * Then the tab itself is the hand: attached through B, it runs the call of the harness on A after
 * B dies (its heartbeats and claims are rows in PostgreSQL, not in B's memory).
 */
const ADMIN = process.env.PADDOCK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `paddock_e2e_${randomBytes(4).toString('hex')}`;
const dbUrl = `${ADMIN.replace(/\/[^/]*$/, '')}/${dbName}`;
const env = (brain: number) => ({
  DATABASE_URL: dbUrl,
  PADDOCK_DATA_DIR: `${process.env.E2E_DATA_DIR ?? '/tmp/paddock-e2e'}/brain-${brain}`,
  ANTHROPIC_API_KEY: 'e2e-test-key',
  ANTHROPIC_BASE_URL: FAKE_URL,
  PADDOCK_DEFAULT_HAND: 'memory',
  PADDOCK_WARM_POOL: '0',
  PADDOCK_LEASE_TTL_MS: '1500',
  PADDOCK_SWEEP_MS: '250',
  PADDOCK_RETRY_BASE_MS: '50',
  // The address people use: the load balancer's, whose Host the instances do not see.
  PADDOCK_PUBLIC_URL: `http://127.0.0.1:${port(3215)}`,
});
const a = new OwnServer(port(3213), env(3213));
const b = new OwnServer(port(3214), env(3214));
const lb = new FailoverProxy(port(3215), [port(3213), port(3214)]);

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

test.use({ baseURL: lb.url });
test.describe.configure({ timeout: 90_000 });
test.beforeAll(async () => {
  await admin(`create database ${dbName}`);
  await a.start();
  await b.start();
  await lb.start();
});
test.afterAll(async () => {
  await lb.stop();
  await a.kill();
  await b.kill();
  await admin(`drop database if exists ${dbName} with (force)`);
});
test.beforeEach(async () => resetFake());

test('instance A dies mid-turn; B finishes the session and the browser follows B without gap or duplicate', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  const id = page.url().split('/s/')[1]!;
  await expect(page.getByTestId('connection')).toHaveText('live');
  expect(lb.target).toBe(port(3213));

  await enqueue(
    { kind: 'message', steps: [{ kind: 'text', text: Array.from({ length: 200 }, (_, i) => `a${i}`).join(' '), chunks: 200 }], chunkDelayMs: 60 },
    { kind: 'message', steps: [{ kind: 'text', text: 'Finished by instance B.' }] },
  );
  await page.getByTestId('composer-input').fill('long task');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('streaming')).toContainText('a5');
  await a.kill();

  await expect(page.getByTestId('agent-message').last()).toHaveText('Finished by instance B.', { timeout: 30_000 });
  await expect(page.getByTestId('status')).toHaveText('idle');
  await expect(page.getByTestId('connection')).toHaveText('live');
  expect(lb.target).toBe(port(3214));

  const seqs = await mirroredSeqs(page, id);
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  const res = await fetch(`${lb.url}/api/trpc/events.list?input=${encodeURIComponent(JSON.stringify({ sessionId: id }))}`, { headers: PROGRAM_HEADERS });
  const events = ((await res.json()) as { result: { data: Array<{ seq: number; type: string }> } }).result.data;
  expect(seqs.length).toBe(events.length);
  // The answered-twice check: exactly one stored answer, though the model was asked twice.
  expect(events.filter((e) => e.type === 'agent.message')).toHaveLength(1);
  expect(events.filter((e) => e.type === 'span.model_request_start')).toHaveLength(2);
});

test('the tab is the hand: attached through B, it serves the harness on A once B dies mid-turn', async ({ page }) => {
  // After the first test A is down and the origin sticks to B; bring A back as the standby.
  await a.start();
  expect(lb.target).toBe(port(3214));
  await page.addInitScript(() => localStorage.setItem('paddock.wcBootTimeoutMs', '2500'));
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  const id = page.url().split('/s/')[1]!;
  await expect(page.getByTestId('connection')).toHaveText('live');
  await page.getByTestId('browser-hand-toggle').click();
  await expect(page.getByTestId('engine-kind')).toHaveText('offline engine', { timeout: 20_000 });
  await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready');

  await enqueue(
    { kind: 'message', steps: [{ kind: 'text', text: Array.from({ length: 200 }, (_, i) => `b${i}`).join(' '), chunks: 200 }], chunkDelayMs: 60 },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo served by the tab for instance A' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Finished by instance A, in your tab.' }] },
  );
  await page.getByTestId('composer-input').fill('long task in my tab');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('streaming')).toContainText('b5');
  await b.kill();

  await expect(page.getByTestId('agent-message').last()).toHaveText('Finished by instance A, in your tab.', { timeout: 40_000 });
  expect(lb.target).toBe(port(3213));
  await expect(page.getByTestId('tool-result').last()).toContainText('served by the tab for instance A');
  await expect(page.getByTestId('tool-hand').last()).toHaveText('on browser-1');
  await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready');

  const list = async () => {
    const res = await fetch(`${lb.url}/api/trpc/events.list?input=${encodeURIComponent(JSON.stringify({ sessionId: id }))}`, { headers: PROGRAM_HEADERS });
    return ((await res.json()) as { result: { data: Array<{ seq: number; type: string; hand?: string }> } }).result.data;
  };
  // The final message shows before the turn's idle is stored: the log is read once the turn has ended.
  await expect.poll(async () => (await list()).at(-1)?.type, { timeout: 10_000 }).toBe('session.status_idle');
  const events = await list();
  // One browser hand all along: attached through B, used by A, never lost.
  expect(events.filter((e) => e.type.startsWith('hand.')).map((e) => `${e.type} ${e.hand}`)).toEqual(['hand.provisioned browser-1']);
  expect(events.filter((e) => e.type === 'user.tool_result')).toHaveLength(1);
  // The mirror has every event, once, with no gap (it may lag the log by a moment, never differ).
  await expect.poll(() => mirroredSeqs(page, id), { timeout: 10_000 }).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
});
