import { randomBytes } from 'node:crypto';
import JSZip from 'jszip';
import Anthropic from '@anthropic-ai/sdk';
import { E2E_API_KEY, expect, test } from '~/e2e/auth';
import { shoot } from '~/e2e/shots';

const WIDTHS = [1440, 390];

test('a memory store made on the Memory page: memories browsed by path, one edited, a stale save refused, a past version redacted', async ({ page, baseURL }) => {
  const name = `team notes ${randomBytes(3).toString('hex')}`;
  await page.goto('/');
  await page.getByRole('link', { name: 'Memory' }).click();
  await expect(page).toHaveURL(/\/memory$/);
  await page.getByTestId('memory-store-name').fill(name);
  await page.getByLabel('Description').fill('What the team learned, for every session.');
  await page.getByTestId('create-memory-store').click();
  const row = page.getByTestId('memory-store-row').filter({ hasText: name });
  await expect(row).toBeVisible();
  await shoot(page, 'memory-stores', WIDTHS);

  await row.getByRole('link', { name }).click();
  await expect(page.getByTestId('memory-store-title')).toHaveText(name);
  const storeId = page.url().split('/').at(-1)!;
  // A program writes one too, with the official SDK against `next start` (its version names its API key).
  const client = new Anthropic({ apiKey: E2E_API_KEY, baseURL, maxRetries: 0 });
  const written = await client.beta.memoryStores.memories.create(storeId, { path: '/projects/paddock/stack.md', content: 'kysely on SQLite and PostgreSQL' });

  await page.getByTestId('new-memory-path').fill('/decisions.md');
  await page.getByTestId('new-memory-content').fill('Use busboy for uploads.');
  await page.getByTestId('create-memory').click();
  await expect(page.getByTestId('memory-path')).toHaveText('/decisions.md');
  await expect(page.getByTestId('memory-prefix')).toHaveText('📁 projects/');
  await page.getByTestId('memory-prefix').click();
  await page.getByTestId('memory-prefix').click();
  await page.getByTestId('memory-item').filter({ hasText: 'stack.md' }).click();
  await expect(page.getByTestId('memory-content')).toHaveValue('kysely on SQLite and PostgreSQL');
  await expect(page.getByTestId('memory-version')).toContainText('by the configured API key');

  // Edited here: a second version, by the owner.
  await page.getByTestId('memory-content').fill('kysely on SQLite and PostgreSQL; jszip for skills');
  await page.getByTestId('save-memory').click();
  await expect(page.getByTestId('memory-version')).toHaveCount(2);
  await expect(page.getByTestId('memory-version').first()).toContainText('modified');
  await expect(page.getByTestId('memory-version').first()).toContainText('by you');

  // A program changes it meanwhile: saving the stale copy is refused, nothing overwritten.
  const current = await client.beta.memoryStores.memories.retrieve(written.id, { memory_store_id: storeId });
  // The program's own stale precondition is the SDK's ConflictError, typed as the API names it.
  const stale = await client.beta.memoryStores.memories.update(written.id, { memory_store_id: storeId, content: 'x', precondition: { type: 'content_sha256', content_sha256: written.content_sha256 } }).catch((e: unknown) => e);
  expect(stale).toBeInstanceOf(Anthropic.ConflictError);
  expect((stale as InstanceType<typeof Anthropic.ConflictError>).error).toMatchObject({ error: { type: 'memory_precondition_failed_error' } });
  await client.beta.memoryStores.memories.update(written.id, { memory_store_id: storeId, content: 'changed by a program', precondition: { type: 'content_sha256', content_sha256: current.content_sha256 } });
  await page.getByTestId('memory-content').fill('my stale edit');
  await page.getByTestId('save-memory').click();
  await expect(page.getByTestId('memory-editor').locator('.error')).toContainText('changed');

  // The first version (the program's) redacted: its content gone, that it happened kept.
  await page.reload();
  await page.getByTestId('memory-prefix').click();
  await page.getByTestId('memory-prefix').click();
  await page.getByTestId('memory-item').filter({ hasText: 'stack.md' }).click();
  await expect(page.getByTestId('memory-version')).toHaveCount(3);
  page.once('dialog', (d) => void d.accept());
  await page.getByTestId('memory-version').last().getByTestId('redact-version').click();
  await expect(page.getByTestId('memory-version').last()).toContainText('redacted');
  await shoot(page, 'memory-store', WIDTHS);
});

test('the new-session form attaches a memory store, read-only when ticked', async ({ page, baseURL }) => {
  const client = new Anthropic({ apiKey: E2E_API_KEY, baseURL, maxRetries: 0 });
  const store = await client.beta.memoryStores.create({ name: `handbook ${randomBytes(3).toString('hex')}` });
  await page.goto('/');
  await page.getByTestId('new-session-memory').selectOption([{ label: store.name }]);
  await page.getByTestId(`new-session-memory-readonly-${store.id}`).check();
  await shoot(page, 'new-session-memory', WIDTHS);
  await page.getByTestId('new-session').click();
  await expect(page).toHaveURL(/\/s\/sesn_/);
  const sessionId = page.url().split('/').at(-1)!;
  expect((await client.beta.sessions.retrieve(sessionId)).resources).toEqual([
    expect.objectContaining({ type: 'memory_store', memory_store_id: store.id, access: 'read_only', mount_path: `/mnt/memory/${store.name.replace(' ', '-')}` }),
  ]);
});

test('a skill uploaded as a zip on the Skills page is listed with its name and description, then deleted', async ({ page }) => {
  const zip = new JSZip();
  zip.file('release-notes/SKILL.md', '---\nname: release-notes\ndescription: Write release notes from merged pull requests.\n---\n# Release notes\n');
  zip.file('release-notes/template.md', '## Changes\n');
  await page.goto('/');
  await page.getByRole('link', { name: 'Skills' }).click();
  await expect(page).toHaveURL(/\/skills$/);
  await page.getByTestId('skill-zip').setInputFiles({ name: 'release-notes.zip', mimeType: 'application/zip', buffer: await zip.generateAsync({ type: 'nodebuffer' }) });
  const row = page.getByTestId('skill-row').filter({ hasText: 'release-notes' }).first();
  await expect(row.getByTestId('skill-description')).toHaveText('release-notes — Write release notes from merged pull requests.');
  await expect(row).toContainText('/mnt/skills/release-notes/');

  // A folder without SKILL.md is refused in plain words.
  await page.getByTestId('skill-zip').setInputFiles({ name: 'empty.zip', mimeType: 'application/zip', buffer: await new JSZip().file('x/README.md', 'hi').generateAsync({ type: 'nodebuffer' }) });
  await expect(page.locator('.error')).toContainText('no SKILL.md');
  await shoot(page, 'skills', WIDTHS);

  // An agent given the skill in its form keeps it (by id, the latest version).
  await page.getByRole('link', { name: 'Agents' }).click();
  await page.getByTestId('new-agent').click();
  const form = page.getByTestId('agent-form');
  const agentName = `Notes writer ${randomBytes(3).toString('hex')}`;
  await form.getByTestId('agent-name').fill(agentName);
  await form.getByTestId('agent-skills').getByLabel('release-notes').check();
  await shoot(page, 'agent-form-skills', WIDTHS);
  await form.getByTestId('save-agent').click();
  await expect(page.getByTestId('agent-form')).toHaveCount(0);
  await page.getByTestId('agent-row').filter({ hasText: agentName }).getByTestId('edit-agent').click();
  await expect(page.getByTestId('agent-skills').getByLabel('release-notes')).toBeChecked();
  await page.getByRole('button', { name: 'Cancel' }).click();

  await page.getByRole('link', { name: 'Skills' }).click();
  // Counted once the list is in: counted before, it was 0 and the delete expected -1 rows.
  await expect(row).toBeVisible();
  const before = await page.getByTestId('skill-row').count();
  page.once('dialog', (d) => void d.accept());
  await row.getByTestId('delete-skill').click();
  await expect(page.getByTestId('skill-row')).toHaveCount(before - 1);
});
