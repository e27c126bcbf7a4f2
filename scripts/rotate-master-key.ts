/**
 * `npm run vault:rotate-master-key`: re-wraps every credential's data key under a new master key
 * (one transaction; the values' ciphertexts do not change). The new key is PADDOCK_NEW_MASTER_KEY,
 * else a generated one. With a key file (no PADDOCK_MASTER_KEY) the new key replaces it; with
 * PADDOCK_MASTER_KEY, a generated key is left in `<dataDir>/master.key.new` for the operator to
 * move into their secret store.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '~/server/config';
import { MASTER_KEY_FILE, masterKeyFromText, readMasterKeyFile, writeMasterKeyFile } from '~/server/vault/master-key';
import { newMasterKey, rotateMasterKey } from '~/server/vault/rotate';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';

async function main(): Promise<number> {
  const config = loadConfig();
  const keyFile = path.join(config.dataDir, MASTER_KEY_FILE);
  const nextFile = `${keyFile}.new`;
  const fromEnv = Boolean(config.PADDOCK_MASTER_KEY);
  if (!fromEnv && !fs.existsSync(keyFile)) {
    console.log(`No master key yet (neither PADDOCK_MASTER_KEY nor ${keyFile}): nothing is sealed, nothing to rotate.`);
    return 0;
  }
  const current = config.PADDOCK_MASTER_KEY ? masterKeyFromText(config.PADDOCK_MASTER_KEY, 'PADDOCK_MASTER_KEY') : readMasterKeyFile(keyFile);
  const given = process.env.PADDOCK_NEW_MASTER_KEY;
  // A run interrupted after writing the new key resumes with it rather than making a third.
  const next = given ? masterKeyFromText(given, 'PADDOCK_NEW_MASTER_KEY') : fs.existsSync(nextFile) ? readMasterKeyFile(nextFile) : newMasterKey();
  if (next.id === current.id) {
    console.error('The new master key is the current one: give a different PADDOCK_NEW_MASTER_KEY, or none to generate one.');
    return 1;
  }
  // The new key is on disk before any row depends on it.
  if (!given || !fromEnv) {
    if (!fs.existsSync(nextFile)) writeMasterKeyFile(nextFile, next);
  }
  const store = config.DATABASE_URL ? await openPostgresStore({ url: config.DATABASE_URL }) : await openSqliteStore({ file: path.join(config.dataDir, 'paddock.sqlite') });
  try {
    const r = await rotateMasterKey(store.db, current, next);
    console.log(`Re-wrapped ${r.rewrapped} sealed values of ${r.credentials} credentials, ${r.repositoryTokens} repository tokens and ${r.webhookKeys} webhook signing keys under master key ${next.id} (was ${current.id}).`);
  } finally {
    await store.close();
  }
  if (!fromEnv) {
    fs.renameSync(nextFile, keyFile);
    console.log(`${keyFile} now holds the new key.`);
    console.log('Next: restart every Paddock instance. Running ones still hold the old key and can no longer open credentials; back up the new key file.');
  } else if (given) {
    console.log('Next: set PADDOCK_MASTER_KEY to the value of PADDOCK_NEW_MASTER_KEY on every instance and restart them; then discard the old key.');
  } else {
    console.log(`Next: set PADDOCK_MASTER_KEY to the contents of ${nextFile} on every instance, restart them, then delete ${nextFile}.`);
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`rotation failed (the database is re-wrapped whole or not at all): ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
