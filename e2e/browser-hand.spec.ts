import type { Page } from '@playwright/test';
import { expect, test } from '~/e2e/auth';
import { send } from '~/e2e/session-page';
import { enqueue, resetFake } from '~/e2e/fake';

test.describe.configure({ timeout: 90_000 });

test.beforeEach(async ({ page }) => {
  await resetFake();
  // The WebContainer cannot boot here (its runtime loads from StackBlitz): make the wait short.
  await page.addInitScript(() => localStorage.setItem('paddock.wcBootTimeoutMs', '2500'));
});

async function newSessionWithBrowserHand(page: Page): Promise<string> {
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await page.getByTestId('browser-hand-toggle').click();
  await expect(page.getByTestId('engine-kind')).toHaveText('offline engine', { timeout: 20_000 });
  await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready');
  return page.url().split('/s/')[1]!;
}

test('the agent writes and runs JavaScript in the tab, a runaway script is stopped, and a reload keeps the workspace', async ({ page }) => {
  await newSessionWithBrowserHand(page);
  // WebContainer boot timed out (offline here), and the UI says so.
  await expect(page.getByTestId('engine-reason')).toContainText('WebContainer');

  const script = "const fs = require('fs');\nfs.writeFileSync('out.txt', 'written by node');\nconsole.log('hello from quickjs', 6 * 7);\n";
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'write', input: { file_path: 'hello.js', content: script } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'node hello.js && cat out.txt' } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: "node -e 'while (true) {}'" } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'All done in your tab.' }] },
  );
  await send(page, 'write and run a script');
  await expect(page.getByTestId('agent-message').last()).toHaveText('All done in your tab.', { timeout: 40_000 });

  const results = page.getByTestId('tool-result');
  await expect(results.nth(1)).toContainText('hello from quickjs 42');
  await expect(results.nth(1)).toContainText('written by node');
  await expect(results.nth(2)).toContainText(/time limit/i);
  await expect(page.getByTestId('tool-hand').first()).toHaveText('on browser-1');

  // The IDE: the file in the tree and the editor, the output in the terminal.
  await page.locator('[data-testid=file-node][data-path="hello.js"]').click();
  await expect(page.getByTestId('code-editor')).toContainText('hello from quickjs');
  await expect(page.locator('[data-testid=file-node][data-path="out.txt"]')).toBeVisible();
  await expect(page.getByTestId('terminal-text')).toContainText('hello from quickjs 42');

  await page.reload();
  await expect(page.getByTestId('engine-kind')).toHaveText('offline engine', { timeout: 20_000 });
  await expect(page.locator('[data-testid=file-node][data-path="hello.js"]')).toBeVisible({ timeout: 10_000 });
  // Loaded whole, the page is cross-origin isolated: WebContainer was tried, and timed out.
  await expect(page.getByTestId('engine-reason')).toContainText('did not boot within');
  // This browser remembers it: the next reload does not wait for it again, and the tab comes back
  // to the same hand.
  await page.reload();
  await expect(page.getByTestId('engine-reason')).toContainText('not tried again', { timeout: 20_000 });
  await expect(page.getByTestId('browser-hand-status')).toContainText('browser-1');
  await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready');
  await expect(page.locator('[data-testid=hand][data-hand="browser-2"]')).toHaveCount(0);
  await expect(page.getByTestId('retry-webcontainer')).toBeVisible();
});

test('closing the tab mid-call fails the call naming the hand, and the session continues on a sandbox hand', async ({ page, context }) => {
  const id = await newSessionWithBrowserHand(page);
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'sleep 60' } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'provision', input: { kind: 'sandbox' } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo back on a sandbox' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Recovered.' }] },
  );
  await send(page, 'run something long');
  await expect(page.locator('[data-testid=tool-call]').first()).toContainText('sleep 60');
  await page.close();

  // A second tab that only watches (it must not offer itself as a hand).
  const watcher = await context.newPage();
  await watcher.addInitScript((sid) => localStorage.setItem(`paddock.browserHand.${sid}`, '0'), id);
  await watcher.goto(`/s/${id}`);
  await expect(watcher.getByTestId('agent-message').last()).toHaveText('Recovered.', { timeout: 40_000 });
  await expect(watcher.getByTestId('tool-result').first()).toContainText('hand browser-1 was lost');
  await expect(watcher.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'lost');
  await expect(watcher.getByTestId('tool-hand').last()).toHaveText(/on sandbox-\d/);
  await expect(watcher.getByTestId('tool-result').last()).toContainText('back on a sandbox');
});
