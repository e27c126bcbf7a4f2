import type { Page } from '@playwright/test';
import { PROGRAM_HEADERS, expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { OwnServer } from '~/e2e/own-server';
import { send, startSession } from '~/e2e/session-page';
import { shoot } from '~/e2e/shots';
import { FAKE_URL, port } from '~/e2e/ports';

/**
 * The tab as a hand needs a cross-origin isolated page for WebContainer, which only a full load of
 * the session page gets. WebContainer cannot boot here (its runtime loads from StackBlitz), so
 * "tried" is what these specs can see: the engine's reason says it did not boot in time, never
 * that the page was not isolated.
 */
test.describe.configure({ timeout: 90_000 });
test.beforeEach(async ({ page }) => {
  await resetFake();
  await page.addInitScript(() => localStorage.setItem('paddock.wcBootTimeoutMs', '2500'));
});

const isolated = (page: Page) => page.evaluate(() => crossOriginIsolated);

/** Serves the session page without its COOP/COEP, as an in-app navigation leaves it (every load, or the first only). */
async function stripIsolation(page: Page, o: { once: boolean }): Promise<() => number> {
  let stripped = 0;
  await page.route(/\/s\/sesn_[A-Za-z0-9]+$/, async (route) => {
    if (route.request().resourceType() !== 'document' || (o.once && stripped > 0)) return route.continue();
    stripped++;
    const res = await route.fetch();
    const headers = { ...res.headers() };
    delete headers['cross-origin-opener-policy'];
    delete headers['cross-origin-embedder-policy'];
    await route.fulfill({ response: res, headers });
  });
  return () => stripped;
}

test('New session and the session list open the session page whole (cross-origin isolated), so the tab hand tries WebContainer; Send is the primary button, the toggle a secondary one', async ({ page }) => {
  await page.goto('/');
  const id = await startSession(page);
  expect(await isolated(page)).toBe(true);
  await expect(page.getByTestId('send')).toHaveClass(/primary/);
  await expect(page.getByTestId('browser-hand-toggle')).not.toHaveClass(/primary/);
  await page.getByTestId('browser-hand-toggle').click();
  await expect(page.getByTestId('engine-kind')).toHaveText('offline engine', { timeout: 20_000 });
  await expect(page.getByTestId('engine-reason')).toContainText('did not boot within');
  await expect(page.getByTestId('engine-reason')).not.toContainText('not cross-origin isolated');
  await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready');
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'write', input: { file_path: 'notes.md', content: '# written in the tab\n' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Written in your tab.' }] },
  );
  await send(page, 'write a note');
  await expect(page.getByTestId('agent-message').last()).toHaveText('Written in your tab.', { timeout: 30_000 });
  await page.locator('[data-testid=file-node][data-path="notes.md"]').click();
  await shoot(page, 'tab-hand', [1440]);
  // At phone width the tab hand lives on the Files tab.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('session-tab-files').click();
  await expect(page.getByTestId('engine-kind')).toBeVisible();
  await shoot(page, 'tab-hand-files', [390]);
  await page.setViewportSize({ width: 1280, height: 720 });

  // From the home page's list: a full load too.
  await page.goto('/');
  await page.locator(`a[href="/s/${id}"]`).click();
  await page.waitForURL(`**/s/${id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  expect(await isolated(page)).toBe(true);
});

test.describe('a session page served without isolation', () => {
  // The page's service worker would answer the document itself, past the route that strips the headers.
  test.use({ serviceWorkers: 'block' });

  test('a session page that is not isolated reloads itself once when the tab is asked to be a hand, saying why, and WebContainer is then tried', async ({ page }) => {
    await page.goto('/');
    const id = await startSession(page);
    const stripped = await stripIsolation(page, { once: true });
    await page.goto(`/s/${id}`);
    expect(await isolated(page)).toBe(false);
    const reloaded = page.waitForEvent('load');
    await page.getByTestId('browser-hand-toggle').click();
    await expect(page.getByTestId('browser-hand-status')).toContainText('Reloading this page once: WebContainer needs the page loaded whole');
    await reloaded;
    await expect(page.getByTestId('engine-kind')).toHaveText('offline engine', { timeout: 20_000 });
    expect(await isolated(page)).toBe(true);
    await expect(page.getByTestId('engine-reason')).toContainText('did not boot within');
    expect(stripped()).toBe(1);
  });

  test('a page that stays unisolated after that one reload falls back to the offline engine, saying the headers did not arrive, and reloads no more', async ({ page }) => {
    await page.goto('/');
    const id = await startSession(page);
    const stripped = await stripIsolation(page, { once: false });
    await page.goto(`/s/${id}`);
    await page.getByTestId('browser-hand-toggle').click();
    await expect(page.getByTestId('engine-reason')).toContainText('not cross-origin isolated even loaded whole', { timeout: 20_000 });
    await page.waitForTimeout(2_500);
    expect(stripped()).toBe(2);
    await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready');
  });
});

test('an archived session does not offer the tab as a hand', async ({ page, baseURL }) => {
  await page.goto('/');
  const id = await startSession(page);
  await expect(page.getByTestId('browser-hand-toggle')).toBeVisible();
  const r = await page.request.post(`${baseURL}/v1/sessions/${id}/archive`, { headers: PROGRAM_HEADERS, data: {} });
  expect(r.status()).toBe(200);
  await page.reload();
  await expect(page.getByTestId('connection')).toHaveText('live');
  await expect(page.getByTestId('hands')).toBeVisible();
  await expect(page.getByTestId('browser-hand-toggle')).toHaveCount(0);
});

test.describe('while the server is down', () => {
  const server = new OwnServer(port(3228), {
    PADDOCK_DATA_DIR: `${process.env.E2E_DATA_DIR ?? '/tmp/paddock-e2e'}/tab-hand`,
    ANTHROPIC_API_KEY: 'e2e-test-key',
    ANTHROPIC_BASE_URL: FAKE_URL,
  });
  test.use({ baseURL: server.url });
  test.beforeAll(async () => server.start());
  test.afterAll(async () => server.kill());

  test("the tab hand keeps its engine and files and says the server cannot be reached; the hands say they are as last recorded; it serves again once the server is back", async ({ page }) => {
    await page.addInitScript(() => localStorage.setItem('paddock.engine', 'offline'));
    await page.goto('/');
    await startSession(page);
    await page.getByTestId('browser-hand-toggle').click();
    await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready', { timeout: 20_000 });
    await enqueue(
      { kind: 'message', steps: [{ kind: 'tool_use', name: 'write', input: { file_path: 'kept.txt', content: 'kept' } }] },
      { kind: 'message', steps: [{ kind: 'text', text: 'Done.' }] },
    );
    await send(page, 'write a file');
    await expect(page.getByTestId('agent-message').last()).toHaveText('Done.', { timeout: 30_000 });
    await expect(page.locator('[data-testid=file-node][data-path="kept.txt"]')).toBeVisible();

    await server.kill();
    await expect(page.getByTestId('connection')).toHaveText('offline', { timeout: 20_000 });
    await expect(page.getByTestId('browser-hand-outage')).toHaveText('The server cannot be reached: this tab keeps its files, and serves the session again once the server is back.');
    await expect(page.getByTestId('hands-stale')).toContainText('As last recorded: the server cannot be reached');
    await expect(page.locator('[data-testid=file-node][data-path="kept.txt"]')).toBeVisible();
    await expect(page.getByTestId('hands')).not.toContainText('another tab');
    await expect(page.getByTestId('engine-kind')).toHaveText('offline engine');
    await shoot(page, 'tab-hand-outage', [1440]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('session-tab-files').click();
    await shoot(page, 'tab-hand-outage-files', [390]);
    await page.setViewportSize({ width: 1280, height: 720 });

    await server.start();
    await expect(page.getByTestId('connection')).toHaveText('live', { timeout: 30_000 });
    await expect(page.getByTestId('browser-hand-outage')).toHaveCount(0);
    await expect(page.getByTestId('hands-stale')).toHaveCount(0);
    await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready', { timeout: 20_000 });
    await enqueue(
      { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'cat kept.txt' } }] },
      { kind: 'message', steps: [{ kind: 'text', text: 'Still here.' }] },
    );
    await send(page, 'read it back');
    await expect(page.getByTestId('agent-message').last()).toHaveText('Still here.', { timeout: 30_000 });
    await expect(page.getByTestId('tool-result').last()).toContainText('kept');
  });
});
