import { type Page, expect } from '@playwright/test';

/** Starts a session from the home page's new-session button (with whatever the pickers hold) and waits until it follows live. */
export async function startSession(page: Page): Promise<string> {
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('connection')).toHaveText('live');
  return page.url().split('/s/')[1]!;
}

/** Types a message into the composer and sends it, as a person does. */
export async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text);
  await page.getByTestId('send').click();
}
