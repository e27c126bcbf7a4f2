import { expect, test } from '~/e2e/auth';

test.use({ baseURL: 'http://127.0.0.1:3211' });

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
