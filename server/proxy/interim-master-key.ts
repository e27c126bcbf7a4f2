import 'server-only';
import { logger } from '~/server/log';
import { type MasterKey, masterKeyFrom, newMasterKey } from '~/server/vault/envelope';

const log = logger('repositories');

/**
 * INTERIM, until the vault's master-key loading is merged (the integrator replaces this call with
 * it): `PADDOCK_MASTER_KEY` (base64 of 32 bytes) if set, else a key for this process only, so
 * repository tokens stored before a restart no longer open (the proxy answers 503 for them).
 */
export function interimMasterKey(env: Readonly<Record<string, string | undefined>> = process.env): MasterKey {
  const raw = env.PADDOCK_MASTER_KEY;
  if (raw) return masterKeyFrom(Buffer.from(raw, 'base64'));
  log.warn('no PADDOCK_MASTER_KEY: repository tokens are sealed under a key that lasts until this process stops');
  return newMasterKey();
}
