import type { Page } from '@playwright/test';
import { expect, test } from '~/e2e/auth';
import { send, startSession } from '~/e2e/session-page';
import { enqueue, recordedRequests, resetFake } from '~/e2e/fake';

test.beforeEach(async () => {
  await resetFake();
});

async function newSession(page: Page): Promise<string> {
  await page.goto('/');
  return startSession(page);
}

test('streams text into the page before the answer is stored', async ({ page }) => {
  const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: words, chunks: 30 }], chunkDelayMs: 60 });
  await newSession(page);
  await send(page, 'say thirty words');

  // Partial text is on screen while no agent.message exists yet.
  const streaming = page.getByTestId('streaming');
  await expect(streaming).toContainText('word3');
  await expect(page.getByTestId('agent-message')).toHaveCount(0);
  const partial = await streaming.textContent();
  expect(partial).not.toContain('word29');

  await expect(page.getByTestId('agent-message')).toHaveText(/word0 .* word29/);
  await expect(page.getByTestId('streaming')).toHaveCount(0);
  await expect(page.getByTestId('status')).toHaveText('idle');
  const types = await page.locator('[data-testid=timeline] li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-type')));
  expect(types).toEqual(['user.message', 'session.status_running', 'span.model_request_start', 'agent.message', 'span.model_request_end', 'session.status_idle']);
  await expect(page.locator('[data-type="span.model_request_end"]')).toContainText(/ttft \d+ ms/);

  const reqs = await recordedRequests();
  expect(reqs.filter((r) => r.path === '/v1/messages')).toHaveLength(1);
  expect(reqs[0]!.auth).toBe('bearer');
});

test('runs a tool round trip and shows the call with its result', async ({ page }) => {
  await enqueue(
    { kind: 'message', steps: [{ kind: 'text', text: 'Writing the file.' }, { kind: 'tool_use', name: 'write', input: { file_path: 'notes/hello.md', content: '# Hello' } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'read', input: { file_path: 'notes/hello.md' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'The file says Hello.' }] },
  );
  await newSession(page);
  await send(page, 'write a note and read it back');

  await expect(page.getByTestId('agent-message').last()).toHaveText('The file says Hello.');
  const calls = page.getByTestId('tool-call');
  await expect(calls).toHaveCount(2);
  await expect(calls.nth(0)).toContainText('notes/hello.md');
  await expect(calls.nth(0).getByTestId('tool-result')).toContainText('wrote 7 bytes');
  await expect(calls.nth(1).getByTestId('tool-result')).toHaveText('# Hello');
  await expect(page.getByTestId('status')).toHaveText('idle');
});

test('a reload renders the session from IndexedDB even with the server unreachable', async ({ page }) => {
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Mirrored answer.' }] });
  const id = await newSession(page);
  await send(page, 'remember this');
  await expect(page.getByTestId('agent-message')).toHaveText('Mirrored answer.');
  const before = await page.locator('[data-testid=timeline] li').count();

  // Every API call now fails: what renders comes from the browser's mirror.
  await page.route('**/api/trpc/**', (route) => route.abort('connectionrefused'));
  await page.reload();
  await expect(page.getByTestId('agent-message')).toHaveText('Mirrored answer.');
  await expect(page.getByTestId('user-message')).toHaveText('remember this');
  await expect(page.locator('[data-testid=timeline] li')).toHaveCount(before);
  await expect(page.getByTestId('offline-banner')).toBeVisible();

  // Back online: the view follows from the last mirrored seq, without duplicates.
  await page.unroute('**/api/trpc/**');
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Second answer.' }] });
  await page.reload();
  await expect(page.getByTestId('connection')).toHaveText('live');
  await send(page, 'and again');
  await expect(page.getByTestId('agent-message').last()).toHaveText('Second answer.');
  const seqs = await page.locator('[data-testid=timeline] li').evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('data-seq'))));
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  expect(page.url()).toContain(id);
});

test('interrupt stops a model answer mid-stream and idles the session, keeping what streamed', async ({ page }) => {
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: Array.from({ length: 200 }, (_, i) => `t${i}`).join(' '), chunks: 200 }], chunkDelayMs: 100 });
  await newSession(page);
  await send(page, 'talk for a long time');
  await expect(page.getByTestId('streaming')).toContainText('t2');
  await page.getByTestId('interrupt').click();

  await expect(page.getByTestId('status')).toHaveText('idle');
  await expect(page.getByTestId('streaming')).toHaveCount(0);
  // The half-written answer stays, marked interrupted (e2e/first-hour.spec.ts checks the model reads it).
  await expect(page.getByTestId('agent-message')).toHaveCount(1);
  await expect(page.getByTestId('interrupted-answer')).toBeVisible();
  await expect(page.locator('[data-type="user.interrupt"]')).toHaveCount(1);
  await expect(page.locator('[data-type="span.model_request_end"]')).toContainText('error');
});

test('deleting a session removes it from the list and from this browser, and its page then says not found', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  const id = page.url().split('/s/')[1]!;
  await page.goto('/');
  const row = page.locator(`[data-testid=session-row][data-session="${id}"]`);
  await expect(row).toHaveCount(1);
  page.once('dialog', (d) => void d.accept());
  await row.getByTestId('delete-session').click();
  await expect(row).toHaveCount(0);
  const res = await page.goto(`/s/${id}`);
  expect(res?.status()).toBe(404);
  await expect(page.getByTestId('not-found')).toContainText('no such session');
});

test('New session stays disabled until the lists that move it have loaded, so a click never lands on a moving button', async ({ page }) => {
  // Lists arriving late push the button along (the pickers appear beside it): hold them back.
  let release: () => void = () => undefined;
  let asked: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  const requested = new Promise<void>((r) => (asked = r));
  await page.route(/\/api\/trpc\/[^?]*(vaults\.list|files\.list|memoryStores\.list)/, async (route) => {
    asked();
    await held;
    await route.continue();
  });
  await page.goto('/');
  const button = page.getByTestId('new-session');
  // The page asks for its lists once hydrated: from then on only the lists keep the button disabled.
  await requested;
  // A moment for React to finish hydrating (without the wait the button would be enabled by then).
  await page.waitForTimeout(300);
  expect(await button.isDisabled()).toBe(true);
  release();
  await expect(button).toBeEnabled();
  await button.click();
  await page.waitForURL(/\/s\/sesn_/);
});
