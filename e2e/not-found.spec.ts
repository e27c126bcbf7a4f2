import { expect, test } from '~/e2e/auth';

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
