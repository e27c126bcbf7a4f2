import http from 'node:http';
import { test as anonymous } from '@playwright/test';
import { E2E_API_KEY, expect, signIn, test } from '~/e2e/auth';
import { OwnServer } from '~/e2e/own-server';
import { FAKE_URL, port } from '~/e2e/ports';

/**
 * Who gets in: a stranger gets a sign-in page and nothing else; the owner signs in with the URL
 * printed at start (once per token), makes and revokes API keys, and signs out.
 */
const PORT = port(3218);
const server = new OwnServer(PORT, {
  PADDOCK_DATA_DIR: `${process.env.E2E_DATA_DIR ?? '/tmp/paddock-e2e'}/access`,
  PADDOCK_DEFAULT_HAND: 'memory',
  PADDOCK_WARM_POOL: '0',
  ANTHROPIC_API_KEY: '',
  ANTHROPIC_BASE_URL: '',
});
test.beforeAll(async () => server.start());
test.afterAll(async () => server.kill());
test.use({ baseURL: server.url });

const shots = process.env.E2E_SCREENSHOTS;

anonymous('a stranger gets nothing but the sign-in page', async ({ page }) => {
  await page.goto(`${server.url}/`);
  await expect(page).toHaveURL(`${server.url}/signin`);
  await expect(page.getByRole('heading')).toContainText('sign in');
  await page.goto(`${server.url}/s/sesn_00000000000000000000000000`);
  await expect(page).toHaveURL(`${server.url}/signin?next=${encodeURIComponent('/s/sesn_00000000000000000000000000')}`);
  await page.goto(`${server.url}/settings`);
  await expect(page).toHaveURL(/\/signin\?next=%2Fsettings$/);
  const api = await page.request.get(`${server.url}/api/trpc/sessions.list`);
  expect(api.status()).toBe(401);
  // A wrong token goes back to the page with an error, and signs nobody in.
  await page.goto(`${server.url}/auth/signin?token=wrong-token&next=/settings`);
  await expect(page.getByTestId('signin-error')).toBeVisible();
  if (shots) {
    await page.screenshot({ path: `${shots}/signin-desktop.png` });
    await page.setViewportSize({ width: 390, height: 780 });
    await page.screenshot({ path: `${shots}/signin-phone.png` });
  }
});

anonymous('the one-time URL printed at start signs the owner in once and returns to the page asked for', async ({ page }) => {
  const line = server.stdout.find((l) => l.includes('paddock: sign in at'));
  expect(line, server.stdout.join('\n')).toBeDefined();
  const url = /(http:\/\/\S+\/auth\/signin\?token=[\w-]+)/.exec(line!)![1]!;
  expect(url.startsWith(`http://localhost:${PORT}/`)).toBe(true);
  // The printed URL names localhost; this browser reaches the server as 127.0.0.1.
  const here = url.replace(`http://localhost:${PORT}`, server.url);
  await page.goto(`${here}&next=/settings`);
  await expect(page).toHaveURL(`${server.url}/settings`);
  await expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible();
  const cookies = await page.context().cookies(server.url);
  expect(cookies.find((c) => c.name === `paddock_session_${PORT}`)).toMatchObject({ httpOnly: true, sameSite: 'Lax' });

  // A second browser with the same URL gets nothing: the token was used.
  const other = await page.context().browser()!.newContext();
  const p2 = await other.newPage();
  await p2.goto(here);
  await expect(p2.getByTestId('signin-error')).toBeVisible();
  await other.close();

  // The owner opening the used link again (clicked twice in the terminal, a bookmark) goes home, still signed in.
  await page.goto(here);
  await expect(page).toHaveURL(`${server.url}/`);
  await expect(page.getByTestId('signin-error')).toHaveCount(0);
});

test('the owner makes an API key shown once, a program uses it, and it stops working once revoked', async ({ page }) => {
  await page.goto('/settings');
  await page.getByLabel('Key name').fill('ci-bot');
  await page.getByTestId('create-key').click();
  const shown = page.getByTestId('new-key');
  await expect(shown).toContainText('it will not be shown again');
  const key = (await shown.locator('code').textContent())!.trim();
  expect(key).toMatch(/^pdk_/);
  await expect(page.getByTestId('api-key-row').filter({ hasText: 'ci-bot' })).toContainText(key.slice(0, 10));
  await expect(page.getByTestId('api-key-row').filter({ hasText: 'ci-bot' })).not.toContainText(key.slice(12));

  const list = () => fetch(`${server.url}/api/trpc/sessions.list`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
  expect(await list()).toBe(200);
  const create = await fetch(`${server.url}/api/trpc/sessions.create`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{}' });
  expect(create.status).toBe(200);
  if (shots) {
    await page.screenshot({ path: `${shots}/settings-desktop.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 780 });
    await page.screenshot({ path: `${shots}/settings-phone.png`, fullPage: true });
  }
  await page.getByTestId('api-key-row').filter({ hasText: 'ci-bot' }).getByRole('button', { name: 'Revoke' }).click();
  await expect(page.getByTestId('api-key-row').filter({ hasText: 'ci-bot' })).toHaveCount(0);
  expect(await list()).toBe(401);
});

test('a cross-site form and a rebinding Host change nothing, even with the owner signed in', async ({ page }) => {
  const count = async () => {
    const r = await fetch(`${server.url}/api/trpc/sessions.list`, { headers: { 'x-api-key': E2E_API_KEY } });
    return ((await r.json()) as { result: { data: { data: unknown[] } } }).result.data.data.length;
  };
  const before = await count();
  // A form posting JSON-looking text/plain to Paddock in this signed-in browser: from a page of
  // another origin (the fake model server's), then even from Paddock's own origin.
  const form = `<form method="post" enctype="text/plain" action="${server.url}/api/trpc/sessions.create"><input name='{"title":"csrf","x":"' value='"}'></form>`;
  const post = async () => {
    await page.setContent(form);
    const [answer] = await Promise.all([page.waitForResponse(`${server.url}/api/trpc/sessions.create`), page.locator('form').evaluate((f: HTMLFormElement) => f.submit())]);
    await page.waitForURL(`${server.url}/api/trpc/sessions.create`);
    return answer.status();
  };
  await page.goto(`${FAKE_URL}/_control/requests`);
  expect(await post()).toBe(403);
  await page.goto('/settings');
  expect(await post()).toBe(415);
  // DNS rebinding: the same server reached under an attacker's name.
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(`${server.url}/api/trpc/sessions.create`, { method: 'POST', headers: { host: `rebind.attacker.example:${PORT}`, 'content-type': 'application/json', 'x-api-key': E2E_API_KEY } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end('{}');
  });
  expect(status).toBe(421);
  expect(await count()).toBe(before);
});

test('signing out ends the sign-in and forgets the offline copy', async ({ page }) => {
  await page.goto('/settings');
  // The service worker has installed (and cached the session list) before the owner signs out.
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  await page.getByTestId('sign-out').click();
  await expect(page).toHaveURL(`${server.url}/signin`);
  await page.goto('/');
  await expect(page).toHaveURL(`${server.url}/signin`);
  // No page of the owner's is left in the service worker's cache (the sign-in page may be).
  const cached = await page.evaluate(async () => {
    const urls: string[] = [];
    for (const name of await caches.keys()) for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
    return urls.filter((u) => !u.startsWith('/_next/'));
  });
  expect(cached.filter((u) => u !== '/signin')).toEqual([]);
  expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length)).toBe(0);
  // Signing in again works (the configured owner token is reusable).
  await signIn(page, server.url);
});

