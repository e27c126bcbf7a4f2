import { defineConfig } from '@playwright/test';
import { AUTH_ENV } from '~/e2e/auth';
import { APP_URL, FAKE_URL, PORTS } from '~/e2e/ports';

const dataDir = process.env.E2E_DATA_DIR ?? '/tmp/paddock-e2e';

const next = (port: number, env: Record<string, string>) => ({
  // Started directly: an npx wrapper leaves an orphaned next-server holding the port.
  command: `node node_modules/next/dist/bin/next start -p ${port}`,
  url: `http://127.0.0.1:${port}/`,
  reuseExistingServer: false,
  timeout: 60_000,
  // PADDOCK_OUTBOUND_ALLOW: the specs' MCP servers and git hosts run on loopback.
  env: { NEXT_TELEMETRY_DISABLED: '1', PADDOCK_LOG_LEVEL: 'warn', PADDOCK_DEV_PAGES: '1', PADDOCK_OUTBOUND_ALLOW: '127.0.0.1,localhost,[::1]', ...AUTH_ENV, ...env },
});

export default defineConfig({
  testDir: './e2e',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    baseURL: APP_URL,
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
    // A failure keeps its trace and screenshot under test-results/ (an intermittent one can be read afterwards).
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  webServer: [
    {
      command: `node --import tsx scripts/fake-anthropic.ts --port ${PORTS.fake}`,
      url: `http://127.0.0.1:${PORTS.fake}/_control/requests`,
      reuseExistingServer: false,
      timeout: 30_000,
    },
    next(PORTS.app, {
      PADDOCK_DATA_DIR: `${dataDir}/app`,
      ANTHROPIC_API_KEY: 'e2e-test-key',
      ANTHROPIC_BASE_URL: FAKE_URL,
      PADDOCK_RETRY_BASE_MS: '50',
    }),
    // No key at all: the labelled offline demo brain.
    next(PORTS.demo, { PADDOCK_DATA_DIR: `${dataDir}/demo`, ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '', ANTHROPIC_BASE_URL: '' }),
  ],
});
