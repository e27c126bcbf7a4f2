import { randomBytes } from 'node:crypto';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { E2E_API_KEY, expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { send } from '~/e2e/session-page';
import { APP_URL } from '~/e2e/ports';

/**
 * A session's mounts in the browser hand (the offline engine: WebContainer cannot boot here): the
 * tab places the session's upload and memory store under /mnt before a bash call, and gives back
 * what the call left in /mnt/session/outputs (a file of the session) and in /mnt/memory (a
 * version by the session).
 */
const client = new Anthropic({ apiKey: E2E_API_KEY, baseURL: APP_URL, maxRetries: 0 });

test.describe.configure({ timeout: 120_000 });
test.beforeEach(async ({ page }) => {
  await resetFake();
  await page.addInitScript(() => localStorage.setItem('paddock.engine', 'offline'));
});

test("the tab reads the session's upload at /mnt/session/uploads, and its output and memory change come back as the session's file and version", async ({ page }) => {
  const uploaded = await client.beta.files.upload({ file: await toFile(Buffer.from('hello from the upload\n'), 'x.txt', { type: 'text/plain' }) });
  const store = await client.beta.memoryStores.create({ name: `notes-${randomBytes(3).toString('hex')}` });
  await client.beta.memoryStores.memories.create(store.id, { path: '/a.md', content: 'A from the store' });
  const session = await client.beta.sessions.create({
    agent: 'agent_default',
    environment_id: 'env_default',
    title: 'mounts in the tab',
    resources: [
      { type: 'file', file_id: uploaded.id, mount_path: 'x' },
      { type: 'memory_store', memory_store_id: store.id, access: 'read_write' },
    ],
  });
  const memoryDir = `/mnt/memory/${store.name}`;

  await page.goto(`/s/${session.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await page.getByTestId('browser-hand-toggle').click();
  await expect(page.getByTestId('engine-kind')).toHaveText('offline engine', { timeout: 20_000 });
  await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready');

  const command = `cat /mnt/session/uploads/x; cat ${memoryDir}/a.md; echo; mkdir -p /mnt/session/outputs && printf 'made in the tab' > /mnt/session/outputs/y.txt && printf 'B from the tab' > ${memoryDir}/b.md && echo wrote`;
  await enqueue({ kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command } }] }, { kind: 'message', steps: [{ kind: 'text', text: 'Done in the tab.' }] });
  await send(page, 'read the upload and write an output and a memory');
  await expect(page.getByTestId('agent-message').last()).toHaveText('Done in the tab.', { timeout: 40_000 });
  await expect(page.getByTestId('tool-hand').first()).toHaveText('on browser-1');
  const result = page.getByTestId('tool-result').first();
  await expect(result).toContainText('hello from the upload');
  await expect(result).toContainText('A from the store');
  await expect(result).toContainText('wrote');

  // The output: a file scoped to the session, downloadable byte for byte (SDK and page link).
  const outputs = (await client.beta.files.list({ scope_id: session.id })).data;
  expect(outputs.map((f) => f.filename)).toEqual(['y.txt']);
  expect(Buffer.from(await (await client.beta.files.download(outputs[0]!.id)).arrayBuffer()).toString()).toBe('made in the tab');
  await page.reload();
  const link = page.getByTestId('session-files').getByTestId('session-output').filter({ hasText: 'y.txt' });
  await expect(link).toHaveCount(1);
  const download = await page.request.get((await link.getAttribute('href'))!);
  expect(download.status()).toBe(200);
  expect(await download.text()).toBe('made in the tab');

  // The memory: a new memory, its version written by the session.
  const paths: Record<string, string> = {};
  for await (const m of client.beta.memoryStores.memories.list(store.id)) if (m.type === 'memory') paths[m.path] = m.id;
  expect(Object.keys(paths).sort()).toEqual(['/a.md', '/b.md']);
  expect((await client.beta.memoryStores.memories.retrieve(paths['/b.md']!, { memory_store_id: store.id })).content).toBe('B from the tab');
  const versions = [];
  for await (const v of client.beta.memoryStores.memoryVersions.list(store.id, { session_id: session.id })) versions.push(v);
  expect(versions).toEqual([expect.objectContaining({ operation: 'created', created_by: { type: 'session_actor', session_id: session.id } })]);
});

test('a change the tab makes to a read-only memory store fails the call, naming the file, and the store keeps its memory', async ({ page }) => {
  const store = await client.beta.memoryStores.create({ name: `handbook-${randomBytes(3).toString('hex')}` });
  await client.beta.memoryStores.memories.create(store.id, { path: '/rules.md', content: 'be kind' });
  const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_only' }] });
  const file = `/mnt/memory/${store.name}/rules.md`;

  await page.goto(`/s/${session.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await page.getByTestId('browser-hand-toggle').click();
  await expect(page.locator('[data-testid=hand][data-hand="browser-1"]')).toHaveAttribute('data-status', 'ready', { timeout: 20_000 });
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: `printf 'be rude' > ${file}; echo changed it` } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: `cat ${file}` } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Noted.' }] },
  );
  await send(page, 'change the rules');
  await expect(page.getByTestId('agent-message').last()).toHaveText('Noted.', { timeout: 40_000 });
  const results = page.getByTestId('tool-result');
  await expect(results.nth(0)).toContainText('changed it');
  await expect(results.nth(0)).toContainText(`these changes to memory were not saved:`);
  await expect(results.nth(0)).toContainText(`- ${file}: `);
  // The next call finds the store's memory back in place.
  await expect(results.nth(1)).toContainText('be kind');
  for await (const m of client.beta.memoryStores.memories.list(store.id)) {
    if (m.type === 'memory') expect((await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: store.id })).content).toBe('be kind');
  }
});
