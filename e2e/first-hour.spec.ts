import type { Page } from '@playwright/test';
import { E2E_API_KEY, expect, test } from '~/e2e/auth';
import { enqueue, recordedRequests, resetFake } from '~/e2e/fake';
import { send } from '~/e2e/session-page';
import { APP_URL } from '~/e2e/ports';

/**
 * Issue 24's "pages that tell the truth", on the server that talks to the fake Messages API: a
 * call waiting for a verdict says so in the list and the header, a denied call reads "denied" with
 * its reason once, Interrupt keeps the half-written answer (and the model reads it), the list
 * searches and filters, the timeline follows new events and filters them.
 */
const BASE = APP_URL;
const SHOTS = process.env.E2E_SHOTS_DIR ?? '/tmp/shots';
const api = { 'x-api-key': E2E_API_KEY, 'content-type': 'application/json' };
test.describe.configure({ timeout: 90_000 });

test.beforeEach(async () => {
  await resetFake();
});

async function v1<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${BASE}/v1/${path}`, { method, headers: api, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function waitStatus(id: string, want: string): Promise<void> {
  await expect.poll(async () => (await v1<{ status: string }>('GET', `sessions/${id}`)).status, { timeout: 20_000 }).toBe(want);
}

/** A session whose agent's bash asks first, idle with one bash call waiting for a verdict. */
async function sessionWaitingForApproval(title: string): Promise<string> {
  const agent = await v1<{ id: string }>('POST', 'agents', {
    name: `Careful ${title}`,
    model: 'claude-sonnet-5-5',
    tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] }],
  });
  await enqueue({ kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'rm -rf build' } }] });
  const s = await v1<{ id: string }>('POST', 'sessions', { agent: agent.id, environment_id: 'env_default', title });
  await v1('POST', `sessions/${s.id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'clean the build folder' }] }] });
  await waitStatus(s.id, 'idle');
  return s.id;
}

const row = (page: Page, id: string) => page.locator(`[data-testid=session-row][data-session="${id}"]`);

test('a call waiting for a verdict says "needs approval" in the list and the header; denied, it reads "denied" with the reason once', async ({ page }) => {
  const id = await sessionWaitingForApproval('Clean up');
  await page.goto('/');
  await expect(row(page, id).getByTestId('session-status')).toHaveText('needs approval');
  await expect(row(page, id).getByTestId('session-last-message')).toHaveText('clean the build folder');
  await expect(row(page, id).getByTestId('session-agent-name')).toHaveText('Careful Clean up');

  await page.goto(`/s/${id}`);
  await expect(page.getByTestId('status')).toHaveText('needs approval');
  await page.getByTestId('tool-deny').click();
  await page.getByTestId('deny-message').fill('keep the build for now');
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Understood, I left it.' }] });
  await page.getByTestId('tool-deny-send').click();
  const call = page.getByTestId('tool-call');
  await expect(call.getByTestId('tool-state')).toHaveText('denied');
  await expect(call.getByTestId('tool-verdict')).toContainText('keep the build for now');
  await expect(call.getByText('keep the build for now')).toHaveCount(1);
  await expect(page.getByTestId('agent-message').last()).toContainText('Understood');
  await expect(page.getByTestId('status')).toHaveText('idle');
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.locator('.chat').screenshot({ path: `${SHOTS}/denied-1440.png` });

  await page.goto('/');
  await expect(row(page, id).getByTestId('session-status')).toHaveText('idle');
  await expect(row(page, id).getByTestId('session-last-message')).toHaveText('Understood, I left it.');
});

test('Interrupt keeps the half-written answer, marked interrupted, and the model reads it next turn', async ({ page }) => {
  const words = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: words, chunks: 120 }], chunkDelayMs: 60 });
  const s = await v1<{ id: string }>('POST', 'sessions', { agent: 'agent_default', environment_id: 'env_default' });
  await page.goto(`/s/${s.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await send(page, 'count slowly');
  await expect(page.getByTestId('streaming')).toContainText('word10');
  await page.getByTestId('interrupt').click();
  const kept = page.locator('.msg.agent[data-interrupted]');
  await expect(kept.getByTestId('interrupted-answer')).toHaveText('interrupted');
  await expect(kept.getByTestId('agent-message')).toContainText('word10');
  await expect(page.getByTestId('streaming')).toHaveCount(0);
  const text = (await kept.getByTestId('agent-message').innerText()).trim();
  expect(text.length).toBeLessThan(words.length);
  // It survives a reload: it is stored, not a leftover preview.
  await page.reload();
  await expect(page.locator('.msg.agent[data-interrupted]').getByTestId('agent-message')).toContainText('word10');
  await page.locator('.chat').screenshot({ path: `${SHOTS}/interrupted-1440.png` });

  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Going on.' }] });
  await send(page, 'go on');
  await expect(page.getByTestId('agent-message').last()).toContainText('Going on.');
  const last = (await recordedRequests()).filter((r) => r.path === '/v1/messages').at(-1);
  const messages = (last?.body?.messages ?? []) as { role: string; content: { type: string; text?: string }[] }[];
  expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  expect(messages[1]?.content[0]?.text).toContain('word10');
  expect(messages[2]?.content.map((c) => c.text)).toEqual(['[The user interrupted this answer here.]', 'go on']);
});

test('the home page finds sessions by title and by status', async ({ page }) => {
  const asking = await sessionWaitingForApproval('Deploy zebra');
  const plain = await v1<{ id: string }>('POST', 'sessions', { agent: 'agent_default', environment_id: 'env_default', title: 'Zebra notes' });
  const other = await v1<{ id: string }>('POST', 'sessions', { agent: 'agent_default', environment_id: 'env_default', title: 'Something else' });
  await page.goto('/');
  await expect(row(page, other.id)).toBeVisible();
  await page.getByTestId('filter-search').fill('ZEBRA');
  await expect(row(page, other.id)).toHaveCount(0);
  await expect(row(page, asking)).toBeVisible();
  await expect(row(page, plain.id)).toBeVisible();
  await page.getByTestId('filter-status').selectOption('needs_approval');
  await expect(row(page, plain.id)).toHaveCount(0);
  await expect(row(page, asking)).toBeVisible();
  await page.getByTestId('filter-status').selectOption('idle');
  await expect(row(page, asking)).toHaveCount(0);
  await expect(row(page, plain.id)).toBeVisible();
  await page.getByTestId('filter-search').fill('no such title');
  await expect(page.getByTestId('sessions-none')).toBeVisible();
});

test('the timeline follows new events while at the bottom, stays put when scrolled up, and filters by type', async ({ page }) => {
  const s = await v1<{ id: string }>('POST', 'sessions', { agent: 'agent_default', environment_id: 'env_default' });
  for (let i = 0; i < 8; i++) {
    await enqueue({ kind: 'message', steps: [{ kind: 'text', text: `answer ${i}` }] });
    await v1('POST', `sessions/${s.id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: `question ${i}` }] }] });
    await waitStatus(s.id, 'idle');
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`/s/${s.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  const scroller = page.locator('.timeline-scroll');
  const gapBelow = () => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
  // The pane opens tall enough to read ten rows.
  const rows = await scroller.evaluate((el) => Math.floor(el.clientHeight / (el.querySelector('li')?.getBoundingClientRect().height ?? 1)));
  expect(rows).toBeGreaterThanOrEqual(10);
  await expect.poll(gapBelow).toBeLessThan(4);
  // The pane getting shorter (a smaller window, a bar above filling in) keeps the reader at the bottom.
  await page.setViewportSize({ width: 1440, height: 820 });
  await expect.poll(gapBelow).toBeLessThan(4);

  const lastSeq = async () => Number(await page.locator('[data-testid=timeline] li').last().getAttribute('data-seq'));
  const before = await lastSeq();
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'one more' }] });
  await send(page, 'one more question');
  await expect.poll(lastSeq).toBeGreaterThan(before + 3);
  await expect.poll(gapBelow).toBeLessThan(4);
  await expect(page.locator('[data-testid=timeline] li').last()).toBeInViewport();

  // Scrolled up, the reader stays where they are while events arrive.
  const box = (await scroller.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -400);
  await expect.poll(gapBelow).toBeGreaterThan(100);
  const top = await scroller.evaluate((el) => Math.round(el.scrollTop));
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'and another' }] });
  await send(page, 'another question');
  await expect(page.getByTestId('agent-message').last()).toContainText('and another');
  expect(await scroller.evaluate((el) => Math.round(el.scrollTop))).toBe(top);
  await expect(page.getByTestId('timeline-jump-latest')).toBeVisible();

  await page.getByTestId('timeline-filter').selectOption('messages');
  const types = await page.locator('[data-testid=timeline] li').evaluateAll((lis) => [...new Set(lis.map((li) => li.getAttribute('data-type')))].sort());
  expect(types).toEqual(['agent.message', 'user.message']);
  await expect(page.getByTestId('timeline-count')).toContainText('of');
  await page.getByTestId('timeline-filter').selectOption('all');
  await page.locator('.bottom').screenshot({ path: `${SHOTS}/timeline-1440.png` });
});
