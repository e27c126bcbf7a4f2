import { randomBytes } from 'node:crypto';
import { expect, test } from '~/e2e/auth';
import { shoot } from '~/e2e/shots';

test('a vault made on the settings page takes a token once and never shows it again, in the page or in any answer the browser got', async ({ page, baseURL }) => {
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const seen: string[] = [];
  // Every answer the browser receives from the server, whole, to scan for the value.
  page.on('response', (res) => {
    if (!res.url().startsWith(baseURL!)) return;
    void res
      .text()
      .then((t) => seen.push(`${res.url()}\n${t}`))
      .catch(() => undefined);
  });
  const name = `Team tools ${randomBytes(3).toString('hex')}`;
  await page.goto('/settings');
  const section = page.getByTestId('vaults');
  await section.getByLabel('Vault name').fill(name);
  await section.getByTestId('create-vault').click();
  const card = page.getByTestId('vault-card').filter({ hasText: name });
  await expect(card).toBeVisible();
  await expect(card).toContainText('No credentials yet.');

  const form = card.getByTestId('credential-form');
  await form.getByLabel('MCP server URL').fill('https://mcp.example.com/mcp');
  await form.getByLabel('Token').fill(canary);
  await form.getByTestId('add-credential').click();
  const row = card.getByTestId('credential-row');
  await expect(row).toHaveCount(1);
  await expect(row).toContainText('static_bearer');
  await expect(row).toContainText('https://mcp.example.com/mcp');
  // The field is empty again: the value is not kept in the page.
  await expect(form.getByLabel('Token')).toHaveValue('');
  // A second token for the same URL in the same vault is refused in plain words.
  await form.getByLabel('MCP server URL').fill('https://mcp.example.com/mcp');
  await form.getByLabel('Token').fill('another');
  await form.getByTestId('add-credential').click();
  await expect(form.locator('.error')).toContainText('https://mcp.example.com/mcp');

  await page.reload();
  await expect(page.getByTestId('vault-card').filter({ hasText: name }).getByTestId('credential-row')).toContainText('static_bearer');
  await shoot(page, 'settings-vaults');
  expect(await page.content()).not.toContain(canary);
  await expect.poll(() => seen.length).toBeGreaterThan(3);
  // The scan is live: the answers do carry the credential's URL.
  expect(seen.some((t) => t.includes('mcp.example.com'))).toBe(true);
  expect(seen.filter((t) => t.includes(canary))).toEqual([]);

  // Deleting the credential, then the vault, removes them from the page.
  await page.getByTestId('vault-card').filter({ hasText: name }).getByTestId('credential-row').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByTestId('vault-card').filter({ hasText: name }).getByTestId('credential-row')).toHaveCount(0);
  await page.getByTestId('vault-card').filter({ hasText: name }).getByRole('button', { name: 'Delete vault' }).click();
  await expect(page.getByTestId('vault-card').filter({ hasText: name })).toHaveCount(0);
});
