import http from 'node:http';
import type { Browser, Frame, Page } from '@playwright/test';
import { expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { shoot } from '~/e2e/shots';
import { APP_URL, port } from '~/e2e/ports';

/** Two "docs sites" on other origins than the app (127.0.0.1:3210): one the agent allows, one it does not. */
const ALLOWED = { port: port(4020), origin: `http://127.0.0.1:${port(4020)}` };
const OTHER = { port: port(4021), origin: `http://127.0.0.1:${port(4021)}` };
const APP = APP_URL;
const AGENT = 'agent_default';

/** A docs page embedding the widget with the one script tag (a forged frame too, on request). */
function docsPage(url: URL): string {
  const forged = url.searchParams.get('forge');
  return `<!doctype html><html lang="en"${url.searchParams.get('dark') ? ' data-theme="dark"' : ''}><head><meta charset="utf-8"><title>Docs</title></head>
<body style="font-family:system-ui;margin:40px"><h1>Product docs</h1><p>Install with <code>npm i thing</code>.</p>
${forged ? `<iframe id="forged" title="forged" src="${APP}/embed/${AGENT}?origin=${encodeURIComponent(forged)}&theme=light" style="width:400px;height:300px"></iframe>` : ''}
<script src="${APP}/embed.js" data-agent="${AGENT}" data-label="Ask the docs" async></script></body></html>`;
}

const servers: http.Server[] = [];
test.beforeAll(async () => {
  for (const site of [ALLOWED, OTHER]) {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(docsPage(new URL(req.url ?? '/', site.origin)));
    });
    await new Promise<void>((resolve) => server.listen(site.port, '127.0.0.1', resolve));
    servers.push(server);
  }
});
test.afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
});

test.beforeEach(async () => {
  await resetFake();
});

/** The owner turns the widget on for the allowed site, on the agents page. */
async function enableWidget(page: Page): Promise<void> {
  await page.goto('/agents');
  const row = page.getByTestId('agent-row').filter({ hasText: AGENT });
  await row.getByTestId('agent-widget').click();
  const panel = row.getByTestId('widget-settings');
  await panel.getByTestId('widget-enabled').check();
  await panel.getByTestId('widget-origins').fill(ALLOWED.origin);
  await panel.getByTestId('widget-save').click();
  await expect(panel.getByTestId('widget-saved')).toBeVisible();
  await expect(panel.getByTestId('widget-snippet')).toContainText(`${APP}/embed.js" data-agent="${AGENT}" async`);
}

/** An anonymous visitor (its own browser context: nothing shared with the owner or other visitors) on a docs page. */
async function visitor(browser: Browser, url: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  return page;
}

async function widgetFrame(page: Page): Promise<Frame> {
  await expect.poll(() => page.frames().some((f) => f.url().includes('/embed/'))).toBe(true);
  return page.frames().find((f) => f.url().includes('/embed/'))!;
}

test('a docs page on another origin embeds the widget: a visitor chats to a tool call and an answer; another visitor sees none of it; a disallowed origin gets nothing', async ({ page, browser }) => {
  test.setTimeout(120_000);
  await enableWidget(page);
  await enqueue(
    { kind: 'message', steps: [{ kind: 'text', text: 'Let me write that down.' }, { kind: 'tool_use', name: 'write', input: { file_path: 'install.md', content: 'npm i thing' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Run **npm i thing**, then:\n\n```sh\nthing --init\n```' }] },
  );

  // Visitor A on the allowed site: the launcher opens the panel, the conversation streams in.
  const ana = await visitor(browser, `${ALLOWED.origin}/`);
  const launcher = ana.getByRole('button', { name: 'Ask the docs' });
  await expect(launcher).toHaveAttribute('aria-expanded', 'false');
  await launcher.focus();
  await ana.keyboard.press('Enter');
  await expect(launcher).toHaveAttribute('aria-expanded', 'true');
  const frame = await widgetFrame(ana);
  const input = frame.getByTestId('widget-input');
  await expect(input).toBeEnabled();
  await expect(input).toBeFocused();
  await input.fill('How do I install it?');
  await input.press('Enter');
  await expect(frame.getByTestId('widget-user')).toHaveText('How do I install it?');
  // The owner shows no tool names (the default): the visitor reads that the agent worked, not what it ran.
  await expect(frame.getByTestId('widget-tool')).toHaveText('worked on it');
  await expect(frame.getByTestId('widget-log')).not.toContainText('install.md');
  const answer = frame.getByTestId('widget-answer').last();
  await expect(answer.locator('strong')).toHaveText('npm i thing');
  await expect(answer.locator('pre code')).toContainText('thing --init');
  await shoot(ana, 'widget-open');
  // Esc closes the panel and gives the focus back to the launcher.
  await input.press('Escape');
  await expect(launcher).toHaveAttribute('aria-expanded', 'false');
  await expect(launcher).toBeFocused();
  const anaSession = await frame.evaluate(async () => {
    const token = localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith('paddock.widget.'))!)!;
    const r = await fetch('/api/trpc/widget.sessions', { headers: { 'x-paddock-visitor': token } });
    return ((await r.json()) as { result: { data: { id: string }[] } }).result.data[0]!.id;
  });

  // Visitor B: its own (empty) widget, and A's conversation is unknown to it.
  const bo = await visitor(browser, `${ALLOWED.origin}/?dark=1`);
  await bo.getByRole('button', { name: 'Ask the docs' }).click();
  const boFrame = await widgetFrame(bo);
  await expect(boFrame.getByTestId('widget')).toHaveAttribute('data-theme', 'dark');
  await expect(boFrame.getByTestId('widget-input')).toBeEnabled();
  await expect(boFrame.getByTestId('widget-user')).toHaveCount(0);
  const seen = await boFrame.evaluate(async (id) => {
    const token = localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith('paddock.widget.'))!)!;
    const list = await fetch(`/api/trpc/events.list?input=${encodeURIComponent(JSON.stringify({ sessionId: id }))}`, { headers: { 'x-paddock-visitor': token } });
    const send = await fetch('/api/trpc/widget.send', { method: 'POST', headers: { 'content-type': 'application/json', 'x-paddock-visitor': token }, body: JSON.stringify({ sessionId: id, text: 'FROM-BO' }) });
    const mine = await fetch('/api/trpc/widget.sessions', { headers: { 'x-paddock-visitor': token } });
    return { list: list.status, send: send.status, mine: ((await mine.json()) as { result: { data: unknown[] } }).result.data.length, text: await list.text() };
  }, anaSession);
  expect(seen).toMatchObject({ list: 404, send: 404, mine: 0 });
  expect(seen.text).not.toContain('How do I install');
  await shoot(bo, 'widget-dark');

  // A site the agent does not allow: the widget says so and offers nothing; the API refuses it too.
  const eve = await visitor(browser, `${OTHER.origin}/`);
  await eve.getByRole('button', { name: 'Ask the docs' }).click();
  const eveFrame = await widgetFrame(eve);
  await expect(eveFrame.getByTestId('widget-unavailable')).toBeVisible();
  await expect(eveFrame.getByTestId('widget-input')).toHaveCount(0);
  const opened = await eve.evaluate(async (app) => {
    const r = await fetch(`${app}/api/trpc/widget.open`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agentId: 'agent_default', origin: location.origin }) });
    return r.status;
  }, APP).catch(() => 'blocked');
  // Cross-origin and not CORS-enabled: the browser gets no answer to read (or the guard refuses it).
  expect([403, 404, 'blocked']).toContain(opened);

  // …nor by claiming the allowed site's name: the frame-ancestors CSP names that origin only, so the browser refuses the frame.
  const liar = await (await browser.newContext()).newPage();
  const [forged] = await Promise.all([liar.waitForResponse((r) => r.url().includes('/embed/')), liar.goto(`${OTHER.origin}/?forge=${encodeURIComponent(ALLOWED.origin)}`)]);
  expect(forged.headers()['content-security-policy']).toBe(`frame-ancestors ${ALLOWED.origin}`);
  await liar.waitForTimeout(1_000);
  const forgedFrame = liar.frames().find((f) => f.name() === 'forged' || f.url().includes('/embed/'));
  expect(forgedFrame ? await forgedFrame.locator('[data-testid=widget]').count() : 0).toBe(0);

  // The owner sees A's conversation in the session list, filtered by the site it came from.
  await page.goto('/');
  await page.getByTestId('filter-origin').selectOption(ALLOWED.origin);
  const rows = page.getByTestId('sessions').locator('tbody tr');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('How do I install it?');
  await expect(rows.first().getByTestId('session-widget-origin')).toHaveText(`widget on ${ALLOWED.origin}`);
  await shoot(page, 'widget-sessions');
});

test('a visitor stops a slow answer with the Stop button (from the keyboard), then asks again and gets an answer', async ({ page, browser }) => {
  test.setTimeout(90_000);
  await enableWidget(page);
  await enqueue(
    // About 20 s of streaming: long enough to be stopped, and to show the button meanwhile.
    { kind: 'message', steps: [{ kind: 'text', text: 'A long answer, word after word. '.repeat(40), chunks: 80 }], chunkDelayMs: 250 },
    { kind: 'message', steps: [{ kind: 'text', text: 'In short: **npm i thing**.' }] },
  );
  const cy = await visitor(browser, `${ALLOWED.origin}/`);
  await cy.getByRole('button', { name: 'Ask the docs' }).click();
  const frame = await widgetFrame(cy);
  const input = frame.getByTestId('widget-input');
  await expect(input).toBeEnabled();
  await input.fill('Tell me everything');
  await input.press('Enter');
  const stop = frame.getByRole('button', { name: 'Stop the answer' });
  await expect(stop).toBeVisible();
  await expect(frame.getByTestId('widget-streaming')).toContainText('A long answer');
  await shoot(cy, 'widget-stop');
  // The same in the dark palette (the host page switches the theme, as embed.js does when the page's changes).
  await cy.evaluate((site) => document.querySelector('iframe')!.contentWindow!.postMessage({ type: 'paddock:theme', theme: 'dark' }, site), APP);
  await expect(frame.getByTestId('widget')).toHaveAttribute('data-theme', 'dark');
  await expect(stop).toBeVisible();
  await shoot(cy, 'widget-stop-dark');

  // Tab from the message box reaches Stop; Enter presses it. The stream ends; what was written stays, as it does for the owner.
  await input.focus();
  await input.press('Tab');
  await expect(stop).toBeFocused();
  await cy.keyboard.press('Enter');
  await expect(stop).toHaveCount(0);
  await expect(frame.getByTestId('widget-stopped')).toBeVisible();
  await expect(frame.getByTestId('widget-streaming')).toHaveCount(0);
  await expect(frame.getByTestId('widget-answer')).toHaveCount(1);
  await expect(frame.getByTestId('widget-answer')).toContainText('A long answer');
  await expect(frame.getByTestId('widget-notice')).toHaveCount(0);

  // The conversation goes on.
  await input.fill('The short version?');
  await input.press('Enter');
  await expect(frame.getByTestId('widget-answer')).toHaveCount(2);
  await expect(frame.getByTestId('widget-answer').last().locator('strong')).toHaveText('npm i thing');
  await expect(frame.getByTestId('widget-user')).toHaveText(['Tell me everything', 'The short version?']);
});

test("the owner names the widget, greets visitors and suggests questions; a click asks one; tool names show only once allowed, and the agent's unasked tools are warned of", async ({ page, browser, context }) => {
  test.setTimeout(120_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: APP });
  await page.goto('/agents');
  const row = page.getByTestId('agent-row').filter({ hasText: AGENT });
  await row.getByTestId('agent-widget').click();
  const panel = row.getByTestId('widget-settings');
  // The default agent runs its toolset without asking: any anonymous visitor could make it.
  await expect(panel.getByTestId('widget-tools-warning')).toContainText('Anonymous visitors would run tools');
  await expect(panel.getByTestId('widget-tools-warning')).toContainText('bash');
  await panel.getByTestId('widget-enabled').check();
  await panel.getByTestId('widget-origins').fill(ALLOWED.origin);
  await panel.getByTestId('widget-display-name').fill('Docs helper');
  await panel.getByTestId('widget-greeting').fill('Hello! I answer questions about the thing.');
  await panel.getByTestId('widget-question').nth(0).fill('How do I install it?');
  await panel.getByTestId('widget-question').nth(1).fill('Which ports does it use?');
  await panel.getByTestId('widget-save').click();
  await expect(panel.getByTestId('widget-saved')).toBeVisible();
  // Every field's control starts in the same column.
  const lefts = await panel.locator('.wf-control').evaluateAll((els) => [...new Set(els.map((e) => Math.round(e.getBoundingClientRect().left)))]);
  expect(lefts).toHaveLength(1);
  await panel.getByTestId('widget-snippet-copy').click();
  await expect(panel.getByTestId('widget-snippet-copy')).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`<script src="${APP}/embed.js" data-agent="${AGENT}" async></script>`);
  await panel.scrollIntoViewIfNeeded();
  await shoot(page, 'widget-settings', [1440, 390]);

  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo INTERNAL-COMMAND' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'It listens on **3000**.' }] },
  );
  const dee = await visitor(browser, `${ALLOWED.origin}/`);
  await dee.getByRole('button', { name: 'Ask the docs' }).click();
  const frame = await widgetFrame(dee);
  await expect(frame.getByRole('heading', { name: 'Docs helper' })).toBeVisible();
  await expect(frame.getByTestId('widget-greeting')).toHaveText('Hello! I answer questions about the thing.');
  await expect(frame.getByTestId('widget-suggestion')).toHaveText(['How do I install it?', 'Which ports does it use?']);
  await shoot(dee, 'widget-greeting', [1440, 390]);
  // What the browser received while tools are hidden: no name, no command, no output.
  const received: string[] = [];
  dee.on('response', (r) => {
    if (r.url().includes('/api/trpc/')) void r.text().then((t) => received.push(t), () => undefined);
  });
  await frame.getByTestId('widget-suggestion').nth(1).click();
  await expect(frame.getByTestId('widget-user')).toHaveText('Which ports does it use?');
  await expect(frame.getByTestId('widget-answer').locator('strong')).toHaveText('3000');
  await expect(frame.getByTestId('widget-tool')).toHaveText('worked on it');
  await shoot(dee, 'widget-tool-hidden', [1440, 390]);
  const listed = await frame.evaluate(async () => {
    const token = localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith('paddock.widget.'))!)!;
    const id = ((await (await fetch('/api/trpc/widget.sessions', { headers: { 'x-paddock-visitor': token } })).json()) as { result: { data: { id: string }[] } }).result.data[0]!.id;
    return (await fetch(`/api/trpc/events.list?input=${encodeURIComponent(JSON.stringify({ sessionId: id }))}`, { headers: { 'x-paddock-visitor': token } })).text();
  });
  expect(listed).toContain('agent.tool_use');
  for (const text of [listed, ...received]) expect(text).not.toMatch(/INTERNAL-COMMAND|"bash"/);

  // The owner allows tool names: the same conversation, read again, names the tool.
  await panel.getByTestId('widget-show-tools').check();
  await panel.getByTestId('widget-save').click();
  await expect(panel.getByTestId('widget-saved')).toBeVisible();
  await dee.reload();
  await dee.getByRole('button', { name: 'Ask the docs' }).click();
  const again = await widgetFrame(dee);
  await expect(again.getByTestId('widget-tool')).toContainText('bash');
  await expect(again.getByTestId('widget-tool')).toContainText('done');
});
