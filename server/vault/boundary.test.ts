import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The vault boundary is a lint rule (eslint.config.mjs); this runs the project's own config on
 * snippets placed as if in each folder, so removing or weakening the rule fails here.
 */
const root = path.resolve(import.meta.dirname, '..', '..');
// Only the import rules, without type information: the project's config as written, minus the
// whole-program type check it would otherwise build (a minute on a busy 2-core machine).
const IMPORT_RULES = new Set(['no-restricted-imports', '@typescript-eslint/no-restricted-imports']);
const eslint = new ESLint({
  cwd: root,
  ruleFilter: ({ ruleId }) => IMPORT_RULES.has(ruleId),
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
});

// Existing files, so the type-aware parser knows them; only the text linted is ours.
const IN_HARNESS = 'server/harness/harness.ts';
const IN_HANDS = 'server/hands/provisioner.ts';
const IN_REST = 'server/rest/vaults.ts';
const IN_VAULT = 'server/vault/secrets.ts';
const IN_CORE = 'server/harness/core/decide.ts';

async function restricted(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.message);
}

describe('the vault boundary (lint)', () => {
  it.each([IN_HARNESS, IN_HANDS])('refuses any vault import in %s', async (file) => {
    for (const mod of ['secrets', 'envelope', 'vault-store', 'master-key', 'rotate']) {
      const msgs = await restricted(file, `import * as v from '~/server/vault/${mod}';\nexport const x = v;\n`);
      expect(msgs.join('\n'), mod).toMatch(/must not import the vault/);
    }
  }, 60_000);

  it('allows only a type import of the MCP secret contract in the harness', async () => {
    expect(await restricted(IN_HARNESS, `import type { McpSecretSource } from '~/server/vault/mcp-secret';\nexport type X = McpSecretSource;\n`)).toEqual([]);
    const msgs = await restricted(IN_HARNESS, `import { type McpSecretSource } from '~/server/vault/mcp-secret';\nimport * as m from '~/server/vault/mcp-secret';\nexport type X = McpSecretSource;\nexport const y = m;\n`);
    expect(msgs.join('\n')).toMatch(/only type imports/);
  }, 60_000);

  it.each([IN_HARNESS, IN_HANDS])('refuses proxy code in %s: the harness gets McpGateway, the registry its own repository port', async (file) => {
    for (const mod of ['mcp-proxy', 'git-proxy', 'repository-store', 'session-token', 'gateway']) {
      const msgs = await restricted(file, `import * as p from '~/server/proxy/${mod}';\nexport const x = p;\n`);
      expect(msgs.join('\n'), mod).toMatch(/only through McpGateway/);
    }
    // Not even the repositories' adapter type: the registry's port is its own (server/hands/repository-port.ts).
    expect((await restricted(file, `import type { RepositoryHands } from '~/server/proxy/repository-hands';\nexport type X = RepositoryHands;\n`)).join('\n')).toMatch(/only through McpGateway/);
  }, 60_000);

  it('lets only the vault and the proxies open secrets', async () => {
    const code = `import { open } from '~/server/vault/envelope';\nimport { VaultSecrets } from '~/server/vault/secrets';\nexport const x = [open, VaultSecrets];\n`;
    expect((await restricted(IN_REST, code)).join('\n')).toMatch(/Only server\/proxy and server\/vault/);
    expect(await restricted(IN_VAULT, code)).toEqual([]);
  }, 60_000);

  it("keeps the harness's core pure: ~/lib and its own files, no other server code and no Node I/O", async () => {
    for (const mod of ['~/server/session/store', '~/server/hands/registry', '~/server/harness/log-view', '~/server/vault/mcp-secret', 'node:fs', 'fs', 'server-only']) {
      const msgs = await restricted(IN_CORE, `import * as m from '${mod}';\nexport const x = m;\n`);
      expect(msgs.join('\n'), mod).toMatch(/server\/harness\/core is pure/);
    }
    expect(await restricted(IN_CORE, `import { newId } from '~/lib/ids';\nimport { decideFrom } from '~/server/harness/core/decide';\nexport const x = [newId, decideFrom];\n`)).toEqual([]);
  }, 60_000);

  it('still refuses relative imports everywhere', async () => {
    for (const file of [IN_HARNESS, IN_REST, IN_VAULT, IN_CORE]) {
      // The parent folder spelled apart, so this file itself holds no relative import.
      const parent = ['.', '.'].join('');
      const msgs = await restricted(file, `import { x } from '${parent}/x';\nexport const y = x;\n`);
      expect(msgs, file).toHaveLength(1);
      expect(msgs[0]).toMatch(/Use the ~\/ alias/);
    }
  }, 60_000);
});
