import { PROGRAM_HEADERS, expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { mirroredSeqs } from '~/e2e/mirror';
import { OwnServer } from '~/e2e/own-server';
import { FAKE_URL, port } from '~/e2e/ports';

const server = new OwnServer(port(3212), {
  PADDOCK_DATA_DIR: `${process.env.E2E_DATA_DIR ?? '/tmp/paddock-e2e'}/offline`,
  ANTHROPIC_API_KEY: 'e2e-test-key',
  ANTHROPIC_BASE_URL: FAKE_URL,
  PADDOCK_DEFAULT_HAND: 'memory',
  PADDOCK_SWEEP_MS: '200',
  PADDOCK_LEASE_TTL_MS: '1000',
});

test.use({ baseURL: server.url });
test.beforeAll(async () => server.start());
test.afterAll(async () => server.kill());
test.beforeEach(async () => resetFake());

test('a server killed mid-answer and restarted: the page stays readable offline and the mirror ends without gap or duplicate', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  const id = page.url().split('/s/')[1]!;
  await expect(page.getByTestId('connection')).toHaveText('live');
  // Let the service worker take control so the page itself survives the outage.
  await page.evaluate(() => navigator.serviceWorker.ready);

  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'First answer.' }] });
  await page.getByTestId('composer-input').fill('one');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('agent-message')).toHaveText('First answer.');
  await page.reload(); // now served (and cached) under the service worker
  await expect(page.getByTestId('agent-message')).toHaveText('First answer.');

  // A slow answer; the server dies while it streams.
  await enqueue(
    { kind: 'message', steps: [{ kind: 'text', text: Array.from({ length: 100 }, (_, i) => `w${i}`).join(' '), chunks: 100 }], chunkDelayMs: 80 },
    { kind: 'message', steps: [{ kind: 'text', text: 'Answer after the crash.' }] },
  );
  await page.getByTestId('composer-input').fill('two');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('streaming')).toContainText('w3');
  await server.kill();

  await expect(page.getByTestId('offline-banner')).toBeVisible();
  await page.reload();
  await expect(page.getByTestId('agent-message').first()).toHaveText('First answer.');
  await expect(page.getByTestId('offline-banner')).toBeVisible();
  await page.goto('/');
  await expect(page.getByTestId('offline-banner')).toBeVisible();
  await expect(page.getByTestId('sessions').locator(`[data-session="${id}"]`)).toBeVisible();

  await server.start();
  await page.goto(`/s/${id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  // The harness on the new process resumes the unanswered turn.
  await expect(page.getByTestId('agent-message').last()).toHaveText('Answer after the crash.', { timeout: 20_000 });
  await expect(page.getByTestId('status')).toHaveText('idle');

  const seqs = await mirroredSeqs(page, id);
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  const res = await fetch(`${server.url}/api/trpc/sessions.get?input=${encodeURIComponent(JSON.stringify({ id }))}`, { headers: PROGRAM_HEADERS });
  const session = ((await res.json()) as { result: { data: { last_seq: number } } }).result.data;
  expect(seqs.length).toBe(session.last_seq);
});

test('a share link once opened stays readable offline, from the viewer\'s own mirror', async ({ page, browser }) => {
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Shared answer.' }] });
  await page.getByTestId('composer-input').fill('share this');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('agent-message')).toHaveText('Shared answer.');
  await page.getByTestId('share-toggle').click();
  const panel = page.getByTestId('share-panel');
  await panel.getByTestId('share-label').fill('offline viewer');
  await panel.getByTestId('share-create').click();
  const url = (await panel.getByTestId('share-url').textContent())!.trim();

  // A stranger opens it, and the service worker takes the page.
  const viewer = await (await browser.newContext()).newPage();
  await viewer.goto(url);
  await expect(viewer.getByTestId('connection')).toHaveText('live');
  await viewer.evaluate(() => navigator.serviceWorker.ready);
  await viewer.reload();
  await expect(viewer.getByTestId('agent-message')).toHaveText('Shared answer.');

  await server.kill();
  await viewer.reload();
  await expect(viewer.getByTestId('agent-message')).toHaveText('Shared answer.');
  await expect(viewer.getByTestId('user-message')).toHaveText('share this');
  await expect(viewer.getByTestId('composer-input')).toHaveCount(0);
  await viewer.context().close();
  await server.start();
});
