import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { decodeMasterKeyText } from '~/lib/master-key-text';
import { type MasterKey, masterKeyFrom, newMasterKey } from '~/server/vault/envelope';

/**
 * Where the vault's master key comes from: `PADDOCK_MASTER_KEY` (32 bytes as base64 or 64 hex
 * characters), else `<dataDir>/master.key`, made on first use with mode 0600. A key file that
 * others may read, or that does not hold 32 bytes, stops the server naming the file: guessing
 * past it would seal new values under a key nobody keeps.
 */

export const MASTER_KEY_FILE = 'master.key';

export function encodeMasterKey(key: MasterKey): string {
  return key.bytes.toString('base64');
}

export function masterKeyFromText(text: string, where: string): MasterKey {
  const bytes = decodeMasterKeyText(text);
  if (!bytes) throw new Error(`${where}: not a master key (32 bytes as base64 or 64 hex characters)`);
  return masterKeyFrom(bytes);
}

/** Reads a key file, refusing one with group/other permissions or the wrong content. */
export function readMasterKeyFile(file: string): MasterKey {
  const st = fs.statSync(file);
  if ((st.mode & 0o077) !== 0) throw new Error(`${file}: the master key file must be readable by its owner only (chmod 600 ${file}); refusing to use it`);
  return masterKeyFromText(fs.readFileSync(file, 'utf8'), file);
}

/** Writes a new key file (0600); fails if one is there, so a key is never overwritten by accident. */
export function writeMasterKeyFile(file: string, key: MasterKey): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${encodeMasterKey(key)}\n`, { mode: 0o600, flag: 'wx' });
}

export function loadMasterKey(o: { value?: string | undefined; dataDir: string }): MasterKey {
  if (o.value) return masterKeyFromText(o.value, 'PADDOCK_MASTER_KEY');
  const file = path.join(o.dataDir, MASTER_KEY_FILE);
  try {
    return readMasterKeyFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  try {
    writeMasterKeyFile(file, newMasterKey());
  } catch (e) {
    // Another instance (or a test's second runtime) made it first: use theirs.
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return readMasterKeyFile(file);
}
