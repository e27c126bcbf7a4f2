import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
      'no-restricted-imports': ['error', { patterns: [{ group: ['../*', '../**'], message: 'Use the ~/ alias.' }] }],
      'no-console': 'error',
    },
  },
  {
    // The harness reaches MCP servers only through the McpGateway it is handed: never the vault,
    // never the proxy itself (so no credential or token-signing code runs in it).
    files: ['server/harness/**'],
    ignores: ['server/harness/**/*.test.ts', 'server/harness/testing/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../*', '../**'], message: 'Use the ~/ alias.' },
            { group: ['~/server/vault/*', '~/server/vault/**', '~/server/proxy/*', '!~/server/proxy/mcp-gateway'], message: 'The harness uses MCP servers only through McpGateway (~/server/proxy/mcp-gateway).' },
          ],
        },
      ],
    },
  },
  {
    files: ['bench/**', 'scripts/**', 'e2e/**'],
    rules: { 'no-console': 'off' },
  },
);
