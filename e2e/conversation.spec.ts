import type { Locator, Page } from '@playwright/test';
import { expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { send, startSession } from '~/e2e/session-page';

/** Screenshots for a person to look at (not compared). */
const SHOTS = process.env.E2E_CHAT_SHOTS_DIR ?? '/tmp/shots-chat';

test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

test.beforeEach(async () => {
  await resetFake();
});

async function newSession(page: Page): Promise<string> {
  await page.goto('/');
  return startSession(page);
}

const CODE = ['export function add(a: number, b: number): number {', '  return a + b; // a long line, so the block is wider than a phone and has to scroll sideways', '}'].join('\n');

const MARKDOWN = [
  '## Plan',
  '',
  'This is **important** and this is `inline code`.',
  '',
  '- first step',
  '- second step',
  '',
  '```ts',
  CODE,
  '```',
  '',
  '| tool | purpose |',
  '| --- | --- |',
  '| read | reads a file |',
  '',
  'Injected: <img src=x onerror="window.__pwned = 1"> and <script>window.__pwned = 2</script> end.',
  '',
  '[docs](https://example.com/docs) and [bad](javascript:window.__pwned=3)',
].join('\n');

/** A long answer that still shows whole: 20 paragraphs, under the collapse limits. */
const longAnswer = (n: number) =>
  Array.from({ length: 20 }, (_, i) => `Answer ${n}, paragraph ${i}: ${'lorem ipsum dolor sit amet '.repeat(4)}`).join('\n\n') + `\n\nEnd of answer ${n}.`;

const scroller = (page: Page) => page.locator('.conversation-scroll');
const gapBelow = (page: Page) => scroller(page).evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
const scrollTop = (page: Page) => scroller(page).evaluate((el) => Math.round(el.scrollTop));

async function wheelUp(page: Page, by: number): Promise<void> {
  const box = (await scroller(page).boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -by);
}

async function height(l: Locator): Promise<number> {
  return (await l.boundingBox())!.height;
}

test('renders an answer as markdown with highlighted code, HTML in it as text, and copies code and messages', async ({ page }) => {
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: MARKDOWN }] });
  await newSession(page);
  await send(page, 'show me some **markdown**');

  const answer = page.getByTestId('agent-message');
  await expect(answer.locator('h2')).toHaveText('Plan');
  await expect(answer.locator('strong')).toHaveText('important');
  await expect(answer.locator('li')).toHaveText(['first step', 'second step']);
  await expect(answer.locator('td').first()).toHaveText('read');
  await expect(answer.locator('pre code')).toHaveText(CODE);
  // The highlighter loads on the first code block and then colours it.
  await expect(answer.locator('pre code .hljs-keyword').first()).toHaveText('export');
  // The user's own text is shown as typed.
  await expect(page.getByTestId('user-message')).toHaveText('show me some **markdown**');
  // The session's tokens so far, and what they cost at the model's list price.
  await expect(page.getByTestId('session-usage')).toContainText(/tokens: in \d+.* · out \d+.* · ≈ \$\d/);

  // HTML stays text: no element, nothing ran.
  await expect(answer).toContainText('<img src=x onerror="window.__pwned = 1">');
  await expect(answer).toContainText('<script>window.__pwned = 2</script>');
  await expect(page.getByTestId('conversation').locator('img, script, iframe')).toHaveCount(0);
  expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
  await expect(answer.getByRole('link', { name: 'docs' })).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(answer.getByRole('link', { name: 'bad' })).toHaveCount(0);
  await expect(answer.getByText('bad', { exact: true })).toBeVisible();

  const copyCode = answer.getByTestId('copy-code');
  await copyCode.click();
  await expect(copyCode).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(CODE);
  await expect(copyCode).toHaveText('Copy code');
  const copyMessage = page.locator('.msg.agent').getByTestId('copy-message');
  await copyMessage.click();
  await expect(copyMessage).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(MARKDOWN);

  for (const [width, h] of [
    [1440, 900],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height: h });
    // Crossing 900 px rebuilds the layout (columns ↔ tabs): wait for the one this width gets, so the
    // chat found below is not the one about to be replaced (CI saw it detach mid-scroll).
    await expect(page.getByTestId('session-tab-chat')).toHaveCount(width <= 900 ? 1 : 0);
    const chat = page.locator('.chat');
    await expect(chat).toBeVisible();
    await expect(async () => chat.scrollIntoViewIfNeeded({ timeout: 2_000 })).toPass();
    // The code block scrolls inside the pane; nothing makes the chat or the page wider.
    expect(await answer.locator('pre').evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    expect(await scroller(page).evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
    await page.screenshot({ path: `${SHOTS}/session-markdown-${width}.png`, fullPage: true });
    await chat.screenshot({ path: `${SHOTS}/chat-markdown-${width}.png` });
  }
});

test('a half-streamed answer with an open code fence renders as a code block, inside the pane', async ({ page }) => {
  const code = Array.from({ length: 16 }, (_, i) => `print("line ${i}")`).join('\n');
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: `Intro with **bold**.\n\n\`\`\`py\n${code}\n\`\`\`\n\nAfter the code.`, chunks: 40 }], chunkDelayMs: 80 });
  await newSession(page);
  await send(page, 'stream some code');

  const streaming = page.getByTestId('streaming');
  await expect(streaming.locator('pre code')).toContainText('line 3');
  await expect(streaming).not.toContainText('After the code.');
  await expect(streaming.locator('strong')).toHaveText('bold');
  await expect(streaming).not.toContainText('```');
  expect(await scroller(page).evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);

  await expect(page.getByTestId('agent-message').locator('p').last()).toHaveText('After the code.');
  await expect(page.getByTestId('agent-message').locator('pre code')).toHaveText(`${code}\n`);
});

test('follows each new answer down, and stays put once the reader scrolls up until Jump to latest', async ({ page }) => {
  test.setTimeout(60_000);
  await newSession(page);
  const answers = page.getByTestId('agent-message');
  for (let n = 1; n <= 6; n++) {
    await enqueue({ kind: 'message', steps: [{ kind: 'text', text: longAnswer(n) }] });
    await send(page, `answer ${n}`);
    await expect(answers).toHaveCount(n);
    await expect(answers.last()).toContainText(`End of answer ${n}.`);
    await expect.poll(() => gapBelow(page)).toBeLessThan(4);
    await expect(answers.last().getByText(`End of answer ${n}.`)).toBeInViewport();
  }
  await expect(page.getByTestId('jump-latest')).toHaveCount(0);

  // A slow answer streams in; the reader scrolls up to read an earlier one meanwhile.
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: longAnswer(7), chunks: 40 }], chunkDelayMs: 75 });
  await send(page, 'answer 7');
  await expect(page.getByTestId('streaming')).toContainText('paragraph 1');
  await wheelUp(page, 2500);
  await expect(page.getByTestId('jump-latest')).toBeVisible();
  await expect.poll(() => gapBelow(page)).toBeGreaterThan(1000);
  // Wait out the wheel's own smooth scroll.
  let top = -1;
  await expect.poll(async () => top === (top = await scrollTop(page)), { intervals: [300] }).toBe(true);
  await expect(answers).toHaveCount(7, { timeout: 15_000 });
  await expect(answers.last()).toContainText('End of answer 7.');
  // Held where the reader left it while the answer grew and was stored.
  expect(await scrollTop(page)).toBe(top);
  await expect(answers.last().getByText('End of answer 7.')).not.toBeInViewport();
  await page.locator('.chat').screenshot({ path: `${SHOTS}/chat-scrolled-up.png` });

  await page.getByTestId('jump-latest').click();
  await expect.poll(() => gapBelow(page)).toBeLessThan(4);
  await expect(answers.last().getByText('End of answer 7.')).toBeInViewport();
  await expect(page.getByTestId('jump-latest')).toHaveCount(0);
});

test('a 200 KB answer and a long tool output show collapsed, in a bounded box, until Show all', async ({ page }) => {
  test.setTimeout(60_000);
  const huge = Array.from({ length: 2_000 }, (_, i) => `Line ${i} of a very long answer: ${'x'.repeat(80)}`).join('\n') + '\n\nEND-OF-LONG-ANSWER';
  expect(huge.length).toBeGreaterThan(200_000);
  const file = Array.from({ length: 120 }, (_, i) => `row ${i}`).join('\n') + '\nLAST-ROW';
  await enqueue(
    // In 1 KB pieces: the default token-sized ones would take minutes to stream 200 KB.
    { kind: 'message', steps: [{ kind: 'text', text: huge, chunks: 200 }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'write', input: { file_path: 'rows.txt', content: file } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'read', input: { file_path: 'rows.txt' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Read it.' }] },
  );
  await newSession(page);
  await send(page, 'write a lot');

  await expect(page.getByTestId('streaming')).toHaveCount(0, { timeout: 20_000 });
  const message = page.locator('.msg.agent').first();
  const body = message.getByTestId('collapsible-body');
  await expect(message.getByTestId('show-all')).toHaveText(/^Show all \(2,002 lines, \d+ KB\)$/);
  expect(await height(message)).toBeLessThan(450);
  expect(await height(body)).toBeLessThanOrEqual(310);
  await expect(message).not.toContainText('END-OF-LONG-ANSWER');
  await page.locator('.chat').screenshot({ path: `${SHOTS}/chat-collapsed.png` });

  await message.getByTestId('show-all').click();
  await expect(message).toContainText('END-OF-LONG-ANSWER');
  expect(await height(body)).toBeGreaterThan(20_000);
  await expect(message.getByTestId('show-all')).toHaveText('Show less');
  await message.getByTestId('show-all').click();
  await expect(message).not.toContainText('END-OF-LONG-ANSWER');

  await send(page, 'now write and read a file');
  await expect(page.getByTestId('agent-message').last()).toHaveText('Read it.');
  const read = page.getByTestId('tool-call').filter({ hasText: 'read' }).last();
  await expect(read.getByTestId('tool-result')).toContainText('row 0');
  await expect(read.getByTestId('tool-result')).not.toContainText('LAST-ROW');
  expect(await height(read)).toBeLessThan(520);
  await read.scrollIntoViewIfNeeded();
  await page.locator('.chat').screenshot({ path: `${SHOTS}/chat-tool-collapsed.png` });
  await read.getByTestId('show-all').click();
  await expect(read.getByTestId('tool-result')).toContainText('LAST-ROW');
});

test('a message sent while the agent is busy shows as queued until the agent takes it up', async ({ page }) => {
  await enqueue(
    { kind: 'message', steps: [{ kind: 'text', text: Array.from({ length: 30 }, (_, i) => `w${i}`).join(' '), chunks: 30 }], chunkDelayMs: 100 },
    { kind: 'message', steps: [{ kind: 'text', text: 'Second answer.' }] },
  );
  await newSession(page);
  await send(page, 'first');
  await expect(page.getByTestId('streaming')).toContainText('w2');
  await send(page, 'second');

  const second = page.locator('.msg.user').filter({ hasText: 'second' });
  await expect(second.getByTestId('queued')).toHaveText('queued');
  await expect(page.locator('.msg.user').filter({ hasText: 'first' }).getByTestId('queued')).toHaveCount(0);
  // It waits below the answer being written, which reads as the reply to "first".
  expect((await second.boundingBox())!.y).toBeGreaterThan((await page.getByTestId('streaming').boundingBox())!.y);
  await page.locator('.chat').screenshot({ path: `${SHOTS}/chat-queued.png` });

  await expect(page.getByTestId('agent-message').last()).toHaveText('Second answer.');
  await expect(page.getByTestId('queued')).toHaveCount(0);
  const said = await page.locator('.msg').evaluateAll((els) => els.map((el) => el.querySelector('[data-testid=user-message], [data-testid=agent-message]')?.textContent?.slice(0, 6)));
  expect(said).toEqual(['first', 'w0 w1 ', 'second', 'Second']);
});
