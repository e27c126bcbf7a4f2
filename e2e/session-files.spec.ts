import { createHash, randomBytes } from 'node:crypto';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { E2E_API_KEY, expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { shoot } from '~/e2e/shots';
import { APP_URL } from '~/e2e/ports';

/**
 * Files in sessions against `next start` with sandbox hands: the official SDK uploads a file, a
 * session mounts it, a bash call reads it at /mnt/session/uploads, what it leaves in
 * /mnt/session/outputs comes back through `files.list({scope_id})` byte for byte; the session page
 * shows both with download links and adds a file to the running session.
 */
const client = new Anthropic({ apiKey: E2E_API_KEY, baseURL: APP_URL, maxRetries: 0 });

test.describe.configure({ timeout: 120_000 });
test.beforeEach(resetFake);

async function untilIdle(sessionId: string, results: number): Promise<Anthropic.Beta.Sessions.BetaManagedAgentsSessionEvent[]> {
  for (let i = 0; i < 600; i++) {
    const events: Anthropic.Beta.Sessions.BetaManagedAgentsSessionEvent[] = [];
    for await (const e of client.beta.sessions.events.list(sessionId)) events.push(e);
    if (events.at(-1)?.type === 'session.status_idle' && events.filter((e) => e.type === 'agent.tool_result').length >= results) return events;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`session ${sessionId} did not go idle`);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const resultText = (e: Anthropic.Beta.Sessions.BetaManagedAgentsSessionEvent | undefined) => JSON.stringify(e ?? null);

test('an upload is read by a bash call in a sandbox hand and its output is downloaded byte-identical, through the SDK and the session page', async ({ page }) => {
  const input = Buffer.concat([Buffer.from('part,qty\nbolt,12\n'), randomBytes(256)]);
  const uploaded = await client.beta.files.upload({ file: await toFile(input, 'parts.csv', { type: 'text/csv' }) });
  const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', title: 'parts report', resources: [{ type: 'file', file_id: uploaded.id, mount_path: 'parts.csv' }] });
  expect(session.resources).toMatchObject([{ type: 'file', file_id: uploaded.id, mount_path: '/mnt/session/uploads/parts.csv' }]);

  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'head -c 17 /mnt/session/uploads/parts.csv; sha256sum /mnt/session/uploads/parts.csv; mkdir -p /mnt/session/outputs/report && cp /mnt/session/uploads/parts.csv /mnt/session/outputs/report/copy.bin && printf "12 bolts\\n" > /mnt/session/outputs/summary.txt' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'The report is in outputs.' }] },
  );
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'summarise the parts' }] }] });
  const events = await untilIdle(session.id, 1);
  const result = resultText(events.find((e) => e.type === 'agent.tool_result'));
  expect(result).toContain('part,qty\\nbolt,12\\n');
  expect(result).toContain(sha256(input));

  const outputs = (await client.beta.files.list({ scope_id: session.id })).data;
  expect(outputs.map((f) => f.filename).sort()).toEqual(['report/copy.bin', 'summary.txt']);
  const copy = outputs.find((f) => f.filename === 'report/copy.bin')!;
  expect(copy).toMatchObject({ size_bytes: input.length, scope: { type: 'session', id: session.id }, downloadable: true });
  expect(Buffer.from(await (await client.beta.files.download(copy.id)).arrayBuffer()).equals(input)).toBe(true);

  // The page: uploads and outputs with download links (the owner's cookie, not an API key).
  await page.goto(`/s/${session.id}`);
  const files = page.getByTestId('session-files');
  await expect(files.getByTestId('session-upload')).toHaveText(['parts.csv']);
  await expect(files.getByTestId('session-output')).toHaveCount(2);
  const link = files.getByTestId('session-output').filter({ hasText: 'report/copy.bin' });
  const download = await page.request.get((await link.getAttribute('href'))!);
  expect(download.status()).toBe(200);
  expect(Buffer.from(await download.body()).equals(input)).toBe(true);
  // Without the owner's cookie the link is refused.
  const stranger = await fetch(`${APP_URL}${(await link.getAttribute('href'))!}`);
  expect(stranger.status).toBe(401);

  // The owner adds a file to the session; its next bash call reads it.
  await files.getByTestId('add-file-input').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('added from the page\n') });
  await expect(files.getByTestId('session-upload')).toHaveText(['parts.csv', 'notes.txt']);
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'cat /mnt/session/uploads/notes.txt' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Read the notes.' }] },
  );
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'read the notes' }] }] });
  const after = await untilIdle(session.id, 2);
  expect(resultText(after.filter((e) => e.type === 'agent.tool_result')[1])).toContain('added from the page');

  await page.reload();
  await expect(page.getByTestId('session-output')).toHaveCount(2);
  await shoot(page, 'session-files', [1440, 390]);

  // The new-session form offers the uploaded files.
  await page.goto('/');
  await expect(page.getByTestId('new-session-files').locator('option', { hasText: 'parts.csv' })).toHaveCount(1);
  await shoot(page, 'new-session-files', [1440, 390]);
});
