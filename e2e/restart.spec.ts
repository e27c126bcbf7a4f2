import { PROGRAM_HEADERS, expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { mirroredSeqs } from '~/e2e/mirror';
import { OwnServer } from '~/e2e/own-server';
import { FAKE_URL, port } from '~/e2e/ports';

/** Ctrl-C or a service manager's SIGTERM while a tab is open and a turn runs, then a restart. */
const STOP_TIMEOUT_MS = 4_000;
const server = new OwnServer(port(3219), {
  PADDOCK_DATA_DIR: `${process.env.E2E_DATA_DIR ?? '/tmp/paddock-e2e'}/restart`,
  ANTHROPIC_API_KEY: 'e2e-test-key',
  ANTHROPIC_BASE_URL: FAKE_URL,
  PADDOCK_DEFAULT_HAND: 'memory',
  PADDOCK_STOP_TIMEOUT_MS: String(STOP_TIMEOUT_MS),
  // A long lease: only a released one lets the restarted server take the turn over at once.
  PADDOCK_LEASE_TTL_MS: '60000',
});

test.use({ baseURL: server.url });
test.beforeAll(async () => server.start());
test.afterAll(async () => server.kill());
test.beforeEach(async () => resetFake());

test('SIGTERM with a tab open and a turn running exits in time; the open tab finds the restarted server and shows what follows, with no reload, gap or duplicate', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  const id = page.url().split('/s/')[1]!;
  await expect(page.getByTestId('connection')).toHaveText('live');

  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'First answer.' }] });
  await page.getByTestId('composer-input').fill('one');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('agent-message')).toHaveText('First answer.');

  // A turn that is still streaming when the stop comes.
  await enqueue(
    { kind: 'message', steps: [{ kind: 'text', text: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '), chunks: 200 }], chunkDelayMs: 80 },
    { kind: 'message', steps: [{ kind: 'text', text: 'Answer after the restart.' }] },
  );
  await page.getByTestId('composer-input').fill('two');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('streaming')).toContainText('w3');
  const stoppedIn = await server.stop('SIGTERM', STOP_TIMEOUT_MS + 2_000);
  expect(stoppedIn).toBeLessThan(STOP_TIMEOUT_MS + 1_000);

  await server.start();
  // The same page, never reloaded: it follows the new server, which resumes the cut-off turn.
  await expect(page.getByTestId('agent-message').last()).toHaveText('Answer after the restart.', { timeout: 20_000 });
  await expect(page.getByTestId('connection')).toHaveText('live');
  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Third answer.' }] });
  await page.getByTestId('composer-input').fill('three');
  await page.getByTestId('send').click();
  await expect(page.getByTestId('agent-message').last()).toHaveText('Third answer.');
  await expect(page.getByTestId('user-message')).toHaveCount(3);
  await expect(page.getByTestId('agent-message')).toHaveCount(3);

  const seqs = await mirroredSeqs(page, id);
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  const res = await fetch(`${server.url}/api/trpc/sessions.get?input=${encodeURIComponent(JSON.stringify({ id }))}`, { headers: PROGRAM_HEADERS });
  const session = ((await res.json()) as { result: { data: { last_seq: number } } }).result.data;
  expect(seqs.length).toBe(session.last_seq);
});
