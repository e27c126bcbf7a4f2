import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import { PROGRAM_HEADERS, signIn } from '~/e2e/auth';
import { OwnServer } from '~/e2e/own-server';
import { port } from '~/e2e/ports';

/**
 * The data dir deleted under a running server (`rm -rf .paddock` in the wrong terminal): the
 * health check, the owner's pages and the API all say so, and nothing more goes into the deleted
 * database.
 */
const PORT = port(3224);
const DATA_DIR = `${process.env.E2E_DATA_DIR ?? '/tmp/paddock-e2e'}/data-dir`;
const SHOTS = process.env.E2E_SHOTS_DIR ?? '/tmp/shots';
const server = new OwnServer(PORT, { PADDOCK_DATA_DIR: DATA_DIR, PADDOCK_DEFAULT_HAND: 'memory', PADDOCK_WARM_POOL: '0', ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: '' });
test.beforeAll(async () => server.start());
test.afterAll(async () => server.kill());

test('a data dir deleted while running: health 503, a banner for the owner, and writes refused with the reason', async ({ page }) => {
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  await signIn(page, server.url);
  await expect(page.getByTestId('data-dir-banner')).toHaveCount(0);

  fs.rmSync(DATA_DIR, { recursive: true, force: true });

  const health = await fetch(`${server.url}/healthz`);
  expect(health.status).toBe(503);
  expect(await health.json()).toMatchObject({ service: 'paddock', status: 'failing', checks: { data_dir: 'missing' } });

  const create = await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers: { ...PROGRAM_HEADERS, 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'agent_default', environment_id: 'env_default' }) });
  // The Managed Agents API's overloaded_error (529), the SDK's retryable answer, with the reason.
  expect(create.status).toBe(529);
  expect(JSON.stringify(await create.json())).toContain('data directory was deleted while the server was running');

  await page.reload();
  await expect(page.getByTestId('data-dir-banner')).toContainText("Paddock's data directory was deleted while the server was running");
  await expect(page.getByTestId('data-dir-banner')).toContainText(DATA_DIR);
  for (const [width, height] of [
    [1440, 900],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: `${SHOTS}/data-dir-banner-${width}.png`, fullPage: true });
  }
});
