import { monotonicFactory } from 'ulid';

/**
 * ulid's own PRNG asks the platform for one random byte per character (16 calls per id, a few of
 * the turn's milliseconds); this one takes them from a kilobyte drawn at once. Same source, same
 * uniformity: a byte / 256 picks each of the 32 characters with equal chance.
 */
const pool = new Uint8Array(1024);
let at = pool.length;
function pooledRandom(): number {
  if (at === pool.length) {
    crypto.getRandomValues(pool);
    at = 0;
  }
  return pool[at++]! / 256;
}

const ulid = monotonicFactory(pooledRandom);

export type IdPrefix = 'sesn' | 'sevt' | 'apik' | 'sesrsc' | 'shr' | 'file' | 'memstore' | 'mem' | 'memver' | 'skill' | 'depl' | 'drun' | 'wh' | 'whdl' | 'wevt' | 'outc' | 'work' | 'envkey';

/** Sortable, prefixed ids in the Managed Agents style (`sesn_01J…`, `sevt_01J…`). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`;
}

export const ID_PATTERN = {
  session: /^sesn_[0-9A-HJKMNP-TV-Z]{26}$/,
  event: /^sevt_[0-9A-HJKMNP-TV-Z]{26}$/,
  apiKey: /^apik_[0-9A-HJKMNP-TV-Z]{26}$/,
  resource: /^sesrsc_[0-9A-HJKMNP-TV-Z]{26}$/,
  share: /^shr_[0-9A-HJKMNP-TV-Z]{26}$/,
  file: /^file_[0-9A-HJKMNP-TV-Z]{26}$/,
  memoryStore: /^memstore_[0-9A-HJKMNP-TV-Z]{26}$/,
  memory: /^mem_[0-9A-HJKMNP-TV-Z]{26}$/,
  memoryVersion: /^memver_[0-9A-HJKMNP-TV-Z]{26}$/,
  skill: /^skill_[0-9A-HJKMNP-TV-Z]{26}$/,
  deployment: /^depl_[0-9A-HJKMNP-TV-Z]{26}$/,
  deploymentRun: /^drun_[0-9A-HJKMNP-TV-Z]{26}$/,
  webhookEndpoint: /^wh_[0-9A-HJKMNP-TV-Z]{26}$/,
  webhookDelivery: /^whdl_[0-9A-HJKMNP-TV-Z]{26}$/,
  outcome: /^outc_[0-9A-HJKMNP-TV-Z]{26}$/,
} as const;
