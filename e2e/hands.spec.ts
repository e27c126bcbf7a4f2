import { expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';

test.beforeEach(async () => {
  await resetFake();
});

test('the first command provisions a sandboxed hand, shown in the hands list and beside the call', async ({ page }) => {
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo hello from the sandbox && ls -a' } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'list_hands', input: {} }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Ran it.' }] },
  );
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('hands')).toContainText('None yet');
  await expect(page.getByTestId('terminal-empty')).toBeVisible();
  await page.getByTestId('composer-input').fill('run something');
  await page.getByTestId('send').click();

  await expect(page.getByTestId('agent-message')).toHaveText('Ran it.');
  const call = page.getByTestId('tool-call').first();
  await expect(call.getByTestId('tool-hand')).toHaveText('on sandbox-1');
  await expect(call.locator('pre.terminal')).toContainText('$ echo hello from the sandbox');
  await expect(call.getByTestId('tool-result')).toContainText('hello from the sandbox');
  await expect(call.getByTestId('tool-result')).toContainText('exit code: 0');
  // The session's first command, made before any hand existed, is in the terminal under the hand that ran it.
  await expect(page.getByTestId('terminal-text')).toContainText('sandbox-1 $ echo hello from the sandbox');
  await expect(page.getByTestId('terminal-text')).toContainText('hello from the sandbox');
  await expect(page.getByTestId('tool-call').nth(1).getByTestId('tool-result')).toContainText('sandbox-1\tsandbox\tready');

  const hand = page.locator('[data-testid=hand][data-hand="sandbox-1"]');
  await expect(hand).toHaveAttribute('data-status', 'ready');
  await expect(hand).toContainText('current');
  await expect(page.locator('[data-type="hand.provisioned"]')).toContainText(/sandbox-1 \(sandbox\) in \d+ ms/);
});
