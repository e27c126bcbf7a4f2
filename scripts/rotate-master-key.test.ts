import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { loadMasterKey } from '~/server/vault/master-key';
import { VaultSecrets } from '~/server/vault/secrets';
import { VaultStore } from '~/server/vault/vault-store';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-rotate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function rotate(env: Record<string, string> = {}) {
  const clean: NodeJS.ProcessEnv = { ...process.env, PADDOCK_DATA_DIR: dir, ...env };
  for (const k of Object.keys(clean)) if ((k.startsWith('PADDOCK_') && k !== 'PADDOCK_DATA_DIR' && !(k in env)) || k === 'DATABASE_URL') delete clean[k];
  return run(process.execPath, ['--conditions=react-server', '--import', 'tsx', 'scripts/rotate-master-key.ts'], { cwd: root, env: clean, timeout: 60_000, encoding: 'utf8' });
}

describe('npm run vault:rotate-master-key', () => {
  it('replaces the key file with a new key that opens every credential, and says what to do next', async () => {
    const oldKey = loadMasterKey({ dataDir: dir });
    const file = path.join(dir, 'paddock.sqlite');
    let store = await openSqliteStore({ file });
    const v = await new VaultStore(store.db, oldKey).createVault({ display_name: 'v' });
    await new VaultStore(store.db, oldKey).createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://x.example.com/mcp', token: 'the-token' } });
    await store.close();

    const out = await rotate();
    expect(out.stdout).toMatch(/Re-wrapped 1 sealed values of 1 credentials/);
    expect(out.stdout).toMatch(/restart every Paddock instance/);
    const keyFile = path.join(dir, 'master.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const newKey = loadMasterKey({ dataDir: dir });
    expect(newKey.id).not.toBe(oldKey.id);
    expect(out.stdout + out.stderr).not.toContain(readFileSync(keyFile, 'utf8').trim());

    store = await openSqliteStore({ file });
    try {
      expect(await new VaultSecrets(store.db, newKey).mcpSecret([v.id], 'https://x.example.com/mcp')).toMatchObject({ token: 'the-token' });
      await expect(new VaultSecrets(store.db, oldKey).mcpSecret([v.id], 'https://x.example.com/mcp')).rejects.toThrow();
    } finally {
      await store.close();
    }
  }, 90_000);
});
