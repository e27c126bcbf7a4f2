import { expect, test } from '~/e2e/auth';
import { shoot } from '~/e2e/shots';
import { DEMO_URL } from '~/e2e/ports';

test.use({ baseURL: DEMO_URL });

test('without a key the offline demo brain answers, labelled as not Claude', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('demo-banner')).toContainText('not Claude');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('demo-banner')).toBeVisible();
  await page.getByTestId('composer-input').fill('write hello.txt: hi there');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('tool-result')).toContainText('wrote 8 bytes to hello.txt');
  await expect(page.locator('[data-type="span.model_request_start"]').first()).toContainText('not Claude');
  await expect(page.getByTestId('status')).toHaveText('idle');
});

test('an empty session offers example prompts the demo brain understands; one click sends it', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  const examples = page.getByTestId('example-prompts');
  await expect(examples.getByRole('button')).toHaveCount(3);
  await examples.getByRole('button', { name: 'write notes.txt: hello from Paddock' }).click();
  await expect(page.getByTestId('tool-result')).toContainText('notes.txt');
  await expect(page.getByTestId('example-prompts')).toHaveCount(0);
  await expect(page.getByTestId('user-message')).toHaveText('write notes.txt: hello from Paddock');
});

test('the demo notice is one line the token line folds into, a chip at phone width; dismissed, it stays a chip, remembered across a reload', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await page.getByTestId('composer-input').fill('write hello.txt: hi there');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('status')).toHaveText('idle');
  const banner = page.getByTestId('demo-banner');
  // The token line is inside the notice, not a line of its own.
  await expect(banner.getByTestId('session-usage')).toContainText('tokens: in');
  await expect(page.getByTestId('session-usage')).toHaveCount(1);
  expect((await banner.boundingBox())!.height).toBeLessThanOrEqual(34);
  await expect(banner.getByTestId('demo-why')).toBeVisible();
  await shoot(page, 'demo-banner', [1440, 390]);

  await page.setViewportSize({ width: 390, height: 844 });
  await expect(banner).toContainText('not Claude');
  await expect(banner.getByTestId('demo-why')).toBeHidden();
  const chip = (await banner.boundingBox())!;
  expect(chip.height).toBeLessThanOrEqual(26);
  expect(chip.width).toBeLessThanOrEqual(390);

  await page.setViewportSize({ width: 1440, height: 900 });
  await banner.getByTestId('demo-dismiss').click();
  await expect(banner).toHaveAttribute('data-dismissed', 'true');
  await page.reload();
  await expect(page.getByTestId('demo-banner')).toHaveAttribute('data-dismissed', 'true');
  await expect(page.getByTestId('demo-banner')).toContainText('not Claude');
  await expect(page.getByTestId('demo-dismiss')).toHaveCount(0);
  await expect(page.getByTestId('demo-why')).toHaveCount(0);
  await shoot(page, 'demo-banner-dismissed', [1440, 390]);
  // The home page's notice is dismissed too (one setting per browser).
  await page.goto('/');
  await expect(page.getByTestId('demo-banner')).toHaveAttribute('data-dismissed', 'true');
});
