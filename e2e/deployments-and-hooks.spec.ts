import http from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import type { Page } from '@playwright/test';
import { E2E_API_KEY, expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { APP_URL, port } from '~/e2e/ports';
import { shoot } from '~/e2e/shots';

/**
 * The pages of issue 28 as their user sees them: deployments (schedule, next run, a run by hand
 * into its session, pause), webhook endpoints (the secret once, a delivery the official SDK
 * verifies, listed with its status), a self-hosted environment's card (a key once, a worker
 * polling), and a session's budget.
 */
const client = new Anthropic({ apiKey: E2E_API_KEY, baseURL: APP_URL, maxRetries: 0 });

test.describe.configure({ timeout: 90_000 });
test.beforeEach(resetFake);

/** No page may scroll sideways at phone width. */
async function fitsPhone(page: Page): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1440, height: 900 });
}

test('the deployments page makes a scheduled deployment, runs it by hand into a session, and pauses it', async ({ page }) => {
  const name = `Weekday notes ${Date.now()}`;
  await page.goto('/deployments');
  const form = page.getByTestId('deployment-new');
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('First message').fill('Summarise what changed yesterday.');
  await form.getByLabel('Cron expression').fill('0 9 * * 1-5');
  await form.getByLabel('Timezone').fill('Europe/Paris');
  await form.getByRole('button', { name: 'Create' }).click();

  const row = page.getByTestId('deployment-row').filter({ hasText: name });
  await expect(row).toContainText('0 9 * * 1-5');
  await expect(row).toContainText('(Europe/Paris) · next:');
  await expect(row).not.toContainText('next: never');
  await expect(row).toContainText('No runs yet.');

  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Yesterday: two fixes landed.' }] });
  await row.getByTestId('deployment-run-now').click();
  const run = row.getByTestId('deployment-run');
  await expect(run).toHaveCount(1);
  await expect(run).toContainText('run by hand');
  await shoot(page, 'deployments', [1440, 390]);
  await fitsPhone(page);

  await row.getByRole('button', { name: 'Pause' }).click();
  await expect(row).toContainText('· paused');
  await expect(row).toContainText('next: paused');
  await expect(row.getByRole('button', { name: 'Unpause' })).toBeVisible();

  // The run's session holds the deployment's first message and the agent's answer.
  await run.getByRole('link', { name: 'session' }).click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('user-message').first()).toContainText('Summarise what changed yesterday.');
  await expect(page.getByTestId('agent-message').last()).toContainText('Yesterday: two fixes landed.');
});

test('a webhook endpoint shows its secret once; a session made then is delivered signed, verified by the SDK, and listed with its status', async ({ page }) => {
  const received: Array<{ body: string; headers: Record<string, string> }> = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ body, headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])) });
      res.writeHead(204).end();
    });
  });
  const hookPort = port(4030);
  await new Promise<void>((resolve) => receiver.listen(hookPort, '127.0.0.1', resolve));
  try {
    await page.goto('/settings');
    const url = `http://127.0.0.1:${hookPort}/hooks/${Date.now()}`;
    await page.getByLabel('Webhook URL').fill(url);
    await page.getByLabel('Event types').fill('session.created');
    await page.getByTestId('create-webhook').click();
    const shown = page.getByTestId('webhook-secret');
    await expect(shown).toContainText('it will not be shown again');
    const secret = (await shown.locator('code').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);

    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', title: 'hooked' });
    await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThan(0);
    const events = received.map((r) => client.beta.webhooks.unwrap(r.body, { headers: r.headers, key: secret }));
    expect(events.map((e) => [e.data.type, e.data.id])).toContainEqual(['session.created', session.id]);

    // Once the page is left, the secret is gone for good; the endpoint lists its delivery and the receiver's 204.
    await page.reload();
    await expect(page.getByTestId('webhook-secret')).toHaveCount(0);
    expect(await page.content()).not.toContain(secret);
    const endpoint = page.getByTestId('webhook-row').filter({ hasText: url });
    await expect(endpoint).toContainText('session.created');
    const deliveries = endpoint.getByTestId('webhook-deliveries');
    await expect(deliveries).toContainText('succeeded');
    await expect(deliveries).toContainText('204');
    await endpoint.scrollIntoViewIfNeeded();
    await shoot(page, 'settings-webhooks', [1440, 390]);
    await fitsPhone(page);
  } finally {
    receiver.close();
  }
});

test("a self-hosted environment's card makes a key shown once and counts the worker polling with it", async ({ page }) => {
  const env = await client.beta.environments.create({ name: `laptops ${Date.now()}`, config: { type: 'self_hosted' } });
  await page.goto('/environments');
  const card = page.getByTestId('environment-row').filter({ hasText: env.name });
  const panel = card.getByTestId('self-hosted-panel');
  await expect(panel.getByTestId('work-stats')).toContainText('workers polling: 0');
  await expect(panel.getByTestId('environment-keys')).toContainText('none yet');
  await panel.getByTestId('make-environment-key').click();
  const made = panel.getByTestId('new-environment-key');
  await expect(made).toContainText(`paddock-hand worker --environment ${env.id}`);
  const key = (await made.locator('code').first().textContent())!.trim();

  // A worker polls with that key (an empty queue answers at once); the card counts it.
  const poll = await fetch(`${APP_URL}/v1/environments/${env.id}/work/poll`, { headers: { 'x-api-key': key, 'anthropic-worker-id': 'laptop-1', 'anthropic-beta': 'managed-agents-2026-04-01' } });
  expect(poll.status).toBeLessThan(300);
  await page.reload();
  await expect(panel.getByTestId('work-stats')).toContainText('workers polling: 1');
  await expect(panel.getByTestId('environment-keys')).toContainText('worker key');
  await expect(panel.getByTestId('environment-keys')).not.toContainText('never used');
  expect(await page.content()).not.toContain(key);
  await card.scrollIntoViewIfNeeded();
  await shoot(page, 'environments-self-hosted', [1440, 390]);
  await fitsPhone(page);
});

test("a session's page shows its budget beside its spend", async ({ page }) => {
  const budget = { type: 'limit' as const, max_list_cost: { amount: '250', currency: 'USD' as const } };
  const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', title: 'budgeted', budget });
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Within budget.' }] });
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] });
  await page.goto(`/s/${session.id}`);
  await expect(page.getByTestId('agent-message').last()).toContainText('Within budget.');
  await expect(page.getByTestId('session-budget')).toContainText('budget $2.50');
  await shoot(page, 'session-budget', [1440, 390]);
  await fitsPhone(page);
});
