import { mkdirSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { send, startSession } from '~/e2e/session-page';

const SHOTS = process.env.E2E_BENCH_SHOTS_DIR ?? '/tmp/shots-bench';
/** The sandbox runtime's placeholders (lib/sandbox-masks.ts), which workspaces made before still hold. */
const MASKS = ['.bashrc', '.bash_profile', '.gitconfig', '.gitmodules', '.mcp.json', '.profile', '.ripgreprc', '.zprofile', '.zshrc', '.vscode', '.idea'];

test.beforeEach(async () => {
  await resetFake();
});

/** A session whose agent wrote two files on a sandbox hand and listed the workspace with `ls -a`. */
async function sessionWithFiles(page: Page): Promise<void> {
  await enqueue(
    {
      kind: 'message',
      steps: [{ kind: 'tool_use', name: 'bash', input: { command: "mkdir -p src && printf 'export const answer = 42;\\n' > src/answer.ts && echo '# Notes' > notes.md && ls -a" } }],
    },
    { kind: 'message', steps: [{ kind: 'text', text: 'Listed.' }] },
  );
  await page.goto('/');
  await startSession(page);
  await send(page, 'make two files and list the workspace');
  await expect(page.getByTestId('agent-message')).toHaveText('Listed.');
}

test('empty panes say what will appear in them', async ({ page }) => {
  await page.goto('/');
  await startSession(page);
  await expect(page.getByTestId('files-empty')).toContainText('No files yet');
  await expect(page.getByTestId('editor-empty')).toContainText('No file open');
  await expect(page.getByTestId('terminal-empty')).toContainText('No commands yet');
  await expect(page.getByTestId('file-tree')).toHaveCount(0);
  await expect(page.getByTestId('timeline-empty')).toContainText('No events yet');
});

test("neither ls -a nor the file tree shows the sandbox's masking placeholders, only the agent's files", async ({ page }) => {
  await sessionWithFiles(page);
  // The runtime's masks are on the hand folder above the workspace (SandboxPolicy.protectRoot).
  const listing = page.getByTestId('tool-result').first();
  await expect(listing).toContainText('notes.md');
  for (const mask of ['.bashrc', '.gitconfig', '.mcp.json', '.vscode']) await expect(listing).not.toContainText(mask);

  const tree = page.getByTestId('file-tree');
  await expect(tree.locator('[data-testid=file-node][data-path="notes.md"]')).toBeVisible();
  await expect(tree.locator('[data-testid=folder-node][data-path="src"]')).toBeVisible();
  const paths = await tree.locator('[data-path]').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-path')));
  expect(paths.filter((p) => MASKS.includes(p ?? ''))).toEqual([]);
});

test('lost and released hands fold into one history line; the live hand stays listed', async ({ page }) => {
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo on the first hand' } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'release', input: { hand: 'sandbox-1' } }] },
    // Kills its own hand (paddock-hand is the shell's parent): the hand is lost mid-call.
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'kill -9 $PPID; sleep 5' } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo on the third hand' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Done.' }] },
  );
  await page.goto('/');
  await startSession(page);
  await send(page, 'use three hands');
  await expect(page.getByTestId('agent-message')).toHaveText('Done.', { timeout: 30_000 });

  const hands = page.getByTestId('hands');
  await expect(hands.locator('[data-testid=hand][data-hand="sandbox-3"]')).toBeVisible();
  await expect(hands.locator('[data-testid=hand][data-hand="sandbox-3"]')).toHaveAttribute('data-status', 'ready');
  const summary = page.getByTestId('hands-history-summary');
  await expect(summary).toHaveText(/^2 earlier hands \(1 lost, 1 released\)/);
  // Folded: the ended hands are not in view until the line is opened.
  await expect(hands.locator('[data-testid=hand][data-hand="sandbox-2"]')).toBeHidden();
  mkdirSync(SHOTS, { recursive: true });
  await page.getByTestId('pane-files').screenshot({ path: `${SHOTS}/hands-folded.png` });
  await summary.click();
  const lost = hands.locator('[data-testid=hand][data-hand="sandbox-2"]');
  await expect(lost).toBeVisible();
  await expect(lost).toHaveAttribute('data-status', 'lost');
  await expect(hands.locator('[data-testid=hand][data-hand="sandbox-1"]')).toHaveAttribute('data-status', 'released');
  // The reason is two lines at most until clicked; its whole text is in the title.
  const reason = lost.getByTestId('hand-reason');
  const full = await reason.getAttribute('title');
  expect(full?.length ?? 0).toBeGreaterThan(0);
  const lineHeight = await reason.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight));
  expect((await reason.boundingBox())!.height).toBeLessThanOrEqual(lineHeight * 2 + 1);
  await page.getByTestId('pane-files').screenshot({ path: `${SHOTS}/hands-history-open.png` });
});

test('hand tabs never wrap, whatever the width of the files pane', async ({ page }) => {
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo one' } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'provision', input: { kind: 'sandbox' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Two hands.' }] },
  );
  await page.goto('/');
  await startSession(page);
  await send(page, 'two hands');
  await expect(page.getByTestId('agent-message')).toHaveText('Two hands.');
  const tabs = page.getByTestId('hand-option');
  await expect(tabs).toHaveCount(2);
  for (const tab of await tabs.all()) {
    // One line: as tall as a single row of its text, however narrow the pane is.
    const height = (await tab.boundingBox())!.height;
    expect(height).toBeLessThan(30);
  }
});

test('the panes resize by dragging and keep their sizes across a reload', async ({ page }) => {
  await sessionWithFiles(page);
  const files = page.getByTestId('pane-files');
  const before = (await files.boundingBox())!.width;
  const handle = (await page.getByTestId('resize-files').boundingBox())!;
  await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
  await page.mouse.down();
  await page.mouse.move(handle.x + handle.width / 2 + 120, handle.y + handle.height / 2, { steps: 8 });
  await page.mouse.up();
  const after = (await files.boundingBox())!.width;
  expect(after).toBeGreaterThan(before + 80);
  await page.reload();
  await expect(page.getByTestId('file-tree')).toBeVisible();
  expect(Math.abs((await page.getByTestId('pane-files').boundingBox())!.width - after)).toBeLessThan(4);
});

test('at 390 px the panes are tabs and the editor gets the whole width; screenshots at 1440 and 390', async ({ page }) => {
  mkdirSync(SHOTS, { recursive: true });
  await page.setViewportSize({ width: 1440, height: 900 });
  await sessionWithFiles(page);
  await page.locator('[data-testid=file-node][data-path="src/answer.ts"]').click();
  await expect(page.getByTestId('code-editor')).toContainText('export const answer = 42;');
  // Wide: chat beside the workbench, the editor wider than the chat's share.
  expect((await page.getByTestId('code-editor').boundingBox())!.width).toBeGreaterThan(600);
  await page.screenshot({ path: `${SHOTS}/session-1440.png` });

  await page.setViewportSize({ width: 390, height: 844 });
  await expect(page.getByTestId('session-tabs')).toBeVisible();
  await page.getByTestId('session-tab-files').click();
  await expect(page.getByTestId('file-tree')).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/session-390-files.png` });
  await page.locator('[data-testid=file-node][data-path="notes.md"]').click();
  // Picking a file opens the editor tab.
  const editor = page.getByTestId('code-editor');
  await expect(editor).toBeVisible();
  await expect(editor).toContainText('# Notes');
  expect((await editor.boundingBox())!.width).toBeGreaterThan(390 - 40);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
  await page.screenshot({ path: `${SHOTS}/session-390-editor.png` });
  await page.getByTestId('session-tab-chat').click();
  await expect(page.getByTestId('agent-message')).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/session-390-chat.png` });
  await page.getByTestId('session-tab-terminal').click();
  await expect(page.getByTestId('terminal-text')).toContainText('ls -a');
  await page.screenshot({ path: `${SHOTS}/session-390-terminal.png` });
});
