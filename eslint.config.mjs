import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const RELATIVE = { group: ['../*', '../**'], message: 'Use the ~/ alias.' };
const NODE_IO = ['fs', 'fs/*', 'path', 'os', 'crypto', 'child_process', 'net', 'http', 'https', 'http2', 'dns', 'stream', 'worker_threads', 'zlib', 'tls', 'dgram', 'cluster', 'url'];
const VAULT_SECRETS = { group: ['~/server/vault/secrets', '~/server/vault/envelope'], message: 'Only server/proxy and server/vault may open or seal secrets (the vault boundary).' };

export default tseslint.config(
  { ignores: ['node_modules/**', '.next/**', '.paddock/**', 'test-results/**', 'playwright-report/**', 'next-env.d.ts', '*.config.*', 'scripts/*.mjs', 'bin/*.mjs', 'public/**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['bench/**', 'scripts/**', 'e2e/**'],
    rules: { 'no-console': 'off' },
  },
  // The vault boundary (ARCHITECTURE.md): only the proxies and the vault open secrets, and the
  // harness and hands import nothing of the vault (a type of the MCP proxy's contract at most).
  // Each block restates the `../` rule: a later `no-restricted-imports` replaces, not merges.
  {
    rules: { 'no-restricted-imports': ['error', { patterns: [RELATIVE, VAULT_SECRETS] }] },
  },
  {
    files: ['server/proxy/**', 'server/vault/**', 'server/runtime.ts', '**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [RELATIVE] }] },
  },
  {
    // The harness reaches MCP servers only through the McpGateway it is handed, and hands get
    // repositories only through their own port (server/hands/repository-port.ts): neither imports proxy code.
    files: ['server/harness/**', 'server/hands/**'],
    ignores: ['**/*.test.ts', 'server/harness/testing/**', 'server/hands/testing/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            RELATIVE,
            { group: ['~/server/vault/**', '!~/server/vault/mcp-secret'], message: 'server/harness and server/hands must not import the vault (no secret may reach a harness or a hand).' },
            { group: ['~/server/proxy/*', '~/server/proxy/**', '!~/server/proxy/mcp-gateway'], message: 'The harness uses MCP servers only through McpGateway (~/server/proxy/mcp-gateway); hands get repositories through their own port (server/hands/repository-port.ts).' },
          ],
        },
      ],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '~/server/vault/mcp-secret', allowTypeImports: true, message: 'only type imports of the vault contract here.' },
          ],
        },
      ],
    },
  },

  // The harness's core is pure, as Temporal keeps workflow code pure: it imports ~/lib and its own
  // files, never the rest of server/ (a store, a hand, the network) nor Node's I/O modules. Its
  // tests may; the block restates the rules above it (a later no-restricted-imports replaces).
  {
    files: ['server/harness/core/**'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            RELATIVE,
            { regex: '^~/server/(?!harness/core/)', message: 'server/harness/core is pure: it imports only ~/lib/** and its own files.' },
            { group: ['node:*', 'server-only', ...NODE_IO], message: 'server/harness/core is pure: no Node I/O.' },
          ],
        },
      ],
    },
  },
);
