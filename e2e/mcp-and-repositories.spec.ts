import { randomBytes } from 'node:crypto';
import { expect, test } from '~/e2e/auth';
import { shoot } from '~/e2e/shots';
import { type EverythingServer, startEverythingServer } from '~/server/proxy/testing/everything-server';

let everything: EverythingServer;

test.beforeAll(async () => {
  everything = await startEverythingServer();
});

test.afterAll(async () => {
  await everything?.close();
});

test('an agent gets an MCP server on the agents page: Test connection lists its tools, a dead URL says unreachable, and the list names the server', async ({ page }) => {
  const name = `MCP agent ${randomBytes(3).toString('hex')}`;
  await page.goto('/agents');
  await page.getByTestId('new-agent').click();
  const form = page.getByTestId('agent-form');
  await form.getByTestId('agent-name').fill(name);
  await form.getByTestId('agent-model').fill('claude-e2e-model');
  await form.getByTestId('add-mcp-server').click();
  const row = form.getByTestId('mcp-server-row');
  await row.getByTestId('mcp-server-name').fill('everything');
  await row.getByTestId('mcp-server-url').fill(`${everything.base}/mcp`);
  await row.getByTestId('mcp-test-connection').click();
  const status = row.getByTestId('mcp-test-status');
  await expect(status).toHaveAttribute('data-status', 'ok', { timeout: 20_000 });
  await expect(status).toContainText('echo');
  await shoot(page, 'agent-mcp-server');

  // Port 9 (discard) has nobody listening here: the answer says so, in words.
  await row.getByTestId('mcp-server-url').fill('http://127.0.0.1:9/mcp');
  await row.getByTestId('mcp-test-connection').click();
  await expect(status).toHaveAttribute('data-status', 'unreachable', { timeout: 20_000 });

  await row.getByTestId('mcp-server-url').fill(`${everything.base}/mcp`);
  await form.getByTestId('save-agent').click();
  await expect(page.getByTestId('agent-form')).toHaveCount(0);
  await expect(page.getByTestId('agent-row').filter({ hasText: name })).toContainText('MCP: everything');
});

test('a new session takes a repository with a token and a vault; its page shows the repository and no answer carries the token', async ({ page, baseURL }) => {
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const seen: string[] = [];
  page.on('response', (res) => {
    if (!res.url().startsWith(baseURL!)) return;
    void res
      .text()
      .then((t) => seen.push(t))
      .catch(() => undefined);
  });
  // A vault to pick, made on the settings page.
  const vault = `Repo vault ${randomBytes(3).toString('hex')}`;
  await page.goto('/settings');
  await page.getByTestId('vaults').getByLabel('Vault name').fill(vault);
  await page.getByTestId('create-vault').click();
  await expect(page.getByTestId('vault-card').filter({ hasText: vault })).toBeVisible();

  await page.goto('/');
  await page.getByTestId('new-session-vaults').selectOption({ label: vault });
  await page.getByTestId('new-session-add-repo').click();
  await page.getByTestId('new-session-repo-url').fill('not a url');
  await page.getByTestId('new-session-repo-token').fill(canary);
  await page.getByTestId('new-session').click();
  await expect(page.getByTestId('new-session-error')).toContainText('must be an https URL');
  await page.getByTestId('new-session-repo-url').fill('https://github.com/acme/widgets');
  await page.getByTestId('new-session-repo-branch').fill('main');
  await shoot(page, 'new-session-repository');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('session-repositories')).toContainText('acme/widgets');
  await shoot(page, 'session-repositories');
  await page.reload();
  await expect(page.getByTestId('session-repositories')).toContainText('acme/widgets');
  expect(await page.content()).not.toContain(canary);
  await expect.poll(() => seen.some((t) => t.includes('github.com/acme/widgets'))).toBe(true);
  expect(seen.filter((t) => t.includes(canary))).toEqual([]);
});
