import { test as anonymous } from '@playwright/test';
import { expect, test } from '~/e2e/auth';

const SHOTS = process.env.E2E_SHOTS_DIR ?? '/tmp/shots';

test('a session this server does not have is a 404 page, not an empty session view', async ({ page }) => {
  for (const id of ['sesn_01J0000000000000000000000X', 'not-a-session-id']) {
    const res = await page.goto(`/s/${id}`);
    expect(res?.status(), id).toBe(404);
    await expect(page.getByTestId('not-found')).toContainText('no such session');
    await expect(page.getByTestId('session-view')).toHaveCount(0);
  }
  await page.getByRole('link', { name: 'All sessions' }).click();
  await expect(page).toHaveURL(/\/$/);
});

test('every unknown route is a themed 404 page with a way home, at desktop and phone width', async ({ page }) => {
  for (const route of ['/nope', '/agents/x/y/z', '/s', '/v2/sessions', '/share']) {
    const res = await page.goto(route);
    expect(res?.status(), route).toBe(404);
    await expect(page.getByTestId('not-found'), route).toContainText('Not found');
    // Paddock's dark page, not Next's white default.
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), route).toBe('rgb(15, 17, 21)');
  }
  await page.goto('/no/such/page');
  for (const [width, height] of [
    [1440, 900],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: `${SHOTS}/not-found-${width}.png`, fullPage: true });
  }
  await page.getByRole('link', { name: "Go to Paddock's home" }).click();
  await expect(page).toHaveURL(/\/$/);
});

anonymous('a stranger gets the same 404 for an unknown route, which says nothing of the server', async ({ page }) => {
  const res = await page.goto('/nope');
  expect(res?.status()).toBe(404);
  await expect(page.getByTestId('not-found')).toContainText('no page at this address');
  await expect(page.getByRole('navigation')).toHaveCount(0);
});
