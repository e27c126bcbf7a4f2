import { type Page } from '@playwright/test';
import { E2E_API_KEY, expect, test } from '~/e2e/auth';
import { DEMO_URL } from '~/e2e/ports';

/**
 * The screens a new user meets in the first hour, each at desktop and phone width, for a person
 * to look at (E2E_SHOTS_DIR): home with sessions, a long conversation and its log, a call waiting
 * for approval, agents, environments, settings. On the demo brain's server, so every answer is
 * deterministic; each screen's one fact a person would check first is asserted too.
 */
const BASE = DEMO_URL;
const SHOTS = process.env.E2E_SHOTS_DIR ?? '/tmp/shots';
const api = { 'x-api-key': E2E_API_KEY, 'content-type': 'application/json' };
test.use({ baseURL: BASE });
test.describe.configure({ timeout: 120_000 });

async function v1<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${BASE}/v1/${path}`, { method, headers: api, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function waitStatus(id: string, want: string): Promise<void> {
  await expect.poll(async () => (await v1<{ status: string }>('GET', `sessions/${id}`)).status, { timeout: 20_000 }).toBe(want);
}

async function say(id: string, text: string): Promise<void> {
  await v1('POST', `sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
  await waitStatus(id, 'idle');
}

async function both(page: Page, name: string): Promise<void> {
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.waitForTimeout(150);
    await page.screenshot({ path: `${SHOTS}/${name}-${width}.png` });
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

test('the first hour, screen by screen, at 1440 and 390 px', async ({ page }) => {
  // A server nobody used yet (this spec alone on a fresh data dir) offers the three first things.
  if ((await v1<{ data: unknown[] }>('GET', 'sessions?limit=1')).data.length === 0) {
    await page.goto('/');
    await expect(page.getByTestId('first-steps')).toContainText('Try the demo');
    await expect(page.getByTestId('first-steps-snippet')).toContainText(`baseURL: '${BASE}'`);
    await both(page, 'home-empty');
  }
  // A long conversation made through the API (titled from its first message), 22 turns.
  const long = await v1<{ id: string }>('POST', 'sessions', { agent: 'agent_default', environment_id: 'env_default' });
  await say(long.id, 'write notes.txt: the plan for today');
  for (let i = 1; i < 22; i++) await say(long.id, i % 3 === 0 ? 'read notes.txt' : `write step-${i}.txt: step ${i} done`);
  // One waiting for approval: an agent whose write asks first.
  const asking = await v1<{ id: string }>('POST', 'agents', {
    name: 'Careful writer',
    model: 'claude-sonnet-5-5',
    tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'write', permission_policy: { type: 'always_ask' } }] }],
  });
  const pending = await v1<{ id: string }>('POST', 'sessions', { agent: asking.id, environment_id: 'env_default' });
  await v1('POST', `sessions/${pending.id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'write todo.txt: buy milk' }] }] });
  await waitStatus(pending.id, 'idle');

  await page.goto('/');
  await expect(page.getByText('write notes.txt: the plan for today').first()).toBeVisible();
  await expect(page.locator(`[data-testid=session-row][data-session="${pending.id}"] [data-testid=session-status]`)).toHaveText('needs approval');
  await expect(page.getByTestId('brain-label')).toHaveCount(0);
  await both(page, 'home');

  await page.goto(`/s/${long.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await expect(page.getByTestId('agent-message').last()).toBeVisible();
  await both(page, 'long-conversation');
  // The log at phone width is its own tab; at desktop width it sits under the chat.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('session-tab-log').click();
  await expect(page.getByTestId('tab-timeline')).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/long-conversation-log-390.png` });
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: `${SHOTS}/long-conversation-log-1440.png`, fullPage: true });

  await page.goto(`/s/${pending.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await expect(page.getByRole('button', { name: /allow|approve/i }).first()).toBeVisible();
  await expect(page.getByTestId('status')).toHaveText('needs approval');
  await both(page, 'approval');

  for (const [path, name] of [
    ['/agents', 'agents'],
    ['/environments', 'environments'],
    ['/settings', 'settings'],
  ] as const) {
    await page.goto(path);
    await expect(page.locator('h1').first()).toBeVisible();
    await both(page, name);
  }
});
