import type { Browser, Page } from '@playwright/test';
import { E2E_API_KEY, E2E_OWNER_TOKEN, PROGRAM_HEADERS, expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { send, startSession } from '~/e2e/session-page';
import { shoot } from '~/e2e/shots';

test.beforeEach(async () => {
  await resetFake();
});

/** Makes a link in the session page's Share panel and returns its URL (shown this once); the panel is closed again. */
async function makeLink(page: Page, label: string, o: { hideFiles?: boolean } = {}): Promise<string> {
  await page.getByTestId('share-toggle').click();
  const panel = page.getByTestId('share-panel');
  await panel.getByTestId('share-label').fill(label);
  if (o.hideFiles) await panel.getByTestId('share-hide-files').check();
  await panel.getByTestId('share-create').click();
  const url = (await panel.getByTestId('share-url').textContent())!.trim();
  expect(url).toMatch(/\/share\/pds_[\w-]{43}$/);
  await expect(panel.getByTestId('share-row').filter({ hasText: label })).toHaveCount(1);
  if (!o.hideFiles) await shoot(page, 'share-panel');
  await page.getByTestId('share-toggle').click();
  await expect(panel).toHaveCount(0);
  return url;
}

/** A page in a browser that never signed in: the person the link was sent to. */
async function stranger(browser: Browser, baseURL: string): Promise<Page> {
  const context = await browser.newContext({ baseURL });
  return context.newPage();
}

test('a share link follows a running session live, refuses a write and dies when revoked', async ({ page, browser, baseURL }) => {
  test.setTimeout(90_000);
  await enqueue(
    { kind: 'message', steps: [{ kind: 'text', text: 'Writing the note.' }, { kind: 'tool_use', name: 'write', input: { file_path: 'shared.md', content: '# Shared' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'First answer done.' }] },
  );
  await page.goto('/');
  const id = await startSession(page);
  await send(page, 'write a note');
  await expect(page.getByTestId('agent-message').last()).toHaveText('First answer done.');
  const url = await makeLink(page, 'for the e2e viewer');
  const token = url.split('/share/')[1]!;

  const viewer = await stranger(browser, baseURL!);
  const opened = await viewer.goto(url);
  expect(opened!.status()).toBe(200);
  expect(opened!.headers()['referrer-policy']).toBe('no-referrer');
  expect(opened!.headers()['x-robots-tag']).toContain('noindex');
  await expect(viewer.locator('meta[name="robots"]')).toHaveAttribute('content', /noindex/);
  await expect(viewer.getByTestId('share-badge')).toBeVisible();
  await expect(viewer.getByTestId('connection')).toHaveText('live');
  // What the owner sees: the conversation, the tool call, the hand's files.
  await expect(viewer.getByTestId('agent-message').last()).toHaveText('First answer done.');
  await expect(viewer.getByTestId('tool-call').first()).toContainText('shared.md');
  // The viewer reads the owner's words, labelled as theirs, not "you".
  await expect(viewer.locator('.msg.user .who').first()).toContainText('owner');
  await expect(viewer.locator('.msg.user .who').first()).not.toContainText('you');
  await expect(viewer.locator('[data-testid=file-node][data-path="shared.md"]')).toBeVisible();
  // Nothing that writes, and nothing of the owner's keys in the page.
  await expect(viewer.getByTestId('composer-input')).toHaveCount(0);
  await expect(viewer.getByTestId('browser-hand-toggle')).toHaveCount(0);
  await expect(viewer.getByTestId('share-toggle')).toHaveCount(0);
  const html = await viewer.content();
  expect(html).not.toContain(E2E_API_KEY);
  expect(html).not.toContain(E2E_OWNER_TOKEN);

  // Live: the owner's next turn streams into the viewer's page as it is written.
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: Array.from({ length: 20 }, (_, i) => `live${i}`).join(' '), chunks: 20 }], chunkDelayMs: 120 });
  await send(page, 'say twenty words');
  await expect(viewer.getByTestId('streaming')).toContainText('live3');
  await expect(viewer.getByTestId('agent-message').last()).toHaveText(/live0 .* live19/);
  await expect(viewer.getByTestId('status')).toHaveText('idle');
  await shoot(viewer, 'share-view');

  // A write is refused by the server, whatever the page does: with the token (read-only) and without it (nobody).
  const attempt = (withToken: boolean) =>
    viewer.evaluate(
      async ({ id, token, withToken }) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (withToken) headers['x-paddock-share'] = token;
        const r = await fetch('/api/trpc/events.send', { method: 'POST', headers, body: JSON.stringify({ sessionId: id, event: { type: 'user.message', content: [{ type: 'text', text: 'FROM-THE-VIEWER' }] } }) });
        return { status: r.status, text: await r.text() };
      },
      { id, token, withToken },
    );
  const refused = await attempt(true);
  expect(refused.status).toBe(403);
  expect(refused.text).toContain('read-only');
  expect((await attempt(false)).status).toBe(401);
  const log = await page.request.get(`/api/trpc/events.list?input=${encodeURIComponent(JSON.stringify({ sessionId: id }))}`, { headers: PROGRAM_HEADERS });
  expect(log.status()).toBe(200);
  expect(await log.text()).not.toContain('FROM-THE-VIEWER');

  // Revoked: the open page stops following within seconds, and the link answers 404.
  const shown = await viewer.getByTestId('agent-message').count();
  await page.getByTestId('share-toggle').click();
  await page.getByTestId('share-panel').getByTestId('share-row').filter({ hasText: 'for the e2e viewer' }).getByTestId('share-revoke').click();
  await expect(page.getByTestId('share-panel').getByTestId('share-row')).toHaveCount(0);
  await expect(viewer.getByTestId('share-ended')).toBeVisible({ timeout: 15_000 });
  await page.getByTestId('share-toggle').click();
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'After the revoke.' }] });
  await send(page, 'one more');
  await expect(page.getByTestId('agent-message').last()).toHaveText('After the revoke.');
  await viewer.waitForTimeout(1_500);
  await expect(viewer.getByText('After the revoke.')).toHaveCount(0);
  await expect(viewer.getByTestId('agent-message')).toHaveCount(shown);
  const gone = await viewer.goto(url);
  expect(gone!.status()).toBe(404);
  await expect(viewer.getByTestId('share-not-found')).toBeVisible();
  await viewer.context().close();
});

test("a link can hide the hands' files; an expired link answers 410 and a forged one 404", async ({ page, browser, baseURL }) => {
  await page.goto('/');
  const id = await startSession(page);
  const url = await makeLink(page, 'without files', { hideFiles: true });
  const viewer = await stranger(browser, baseURL!);
  await viewer.goto(url);
  await expect(viewer.getByTestId('share-badge')).toBeVisible();
  await expect(viewer.getByTestId('files-hidden')).toBeVisible();

  // A link made to last about a second (the API the Share panel uses; the panel's shortest is an hour).
  const made = await page.request.post('/api/trpc/shares.create', { headers: { origin: baseURL!, 'content-type': 'application/json' }, data: { sessionId: id, expiresInHours: 0.0003 } });
  expect(made.status()).toBe(200);
  const { path } = ((await made.json()) as { result: { data: { path: string } } }).result.data;
  await viewer.waitForTimeout(1_500);
  const expired = await viewer.goto(path);
  expect(expired!.status()).toBe(410);
  expect(expired!.headers()['referrer-policy']).toBe('no-referrer');
  await expect(viewer.getByTestId('share-expired')).toBeVisible();

  const forged = await viewer.goto(`/share/pds_${'A'.repeat(43)}`);
  expect(forged!.status()).toBe(404);
  await expect(viewer.getByTestId('share-not-found')).toBeVisible();
  await viewer.context().close();
});
