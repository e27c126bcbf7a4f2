import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('./', import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^~\//, replacement: `${root}` },
      // `server-only` throws outside a React Server environment; tests are server-side code.
      { find: /^server-only$/, replacement: `${root}test/empty-module.ts` },
    ],
  },
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', '.next/**', 'e2e/**'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Vitest's default (cores - 1) is one worker on a 2-core machine, which then idles 40 % of the
    // time: many suites wait on sandboxes, subprocesses and timers. Two measured 9.3 min against 12.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The MCP servers, token endpoints and git hosts tests start listen on loopback, which the
    // outbound address policy refuses unless the operator trusts it (tests of the refusal unset it).
    env: { PADDOCK_OUTBOUND_ALLOW: '127.0.0.1,localhost,[::1]' },
  },
});
