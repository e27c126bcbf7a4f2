import 'server-only';
import { MASTER_KEY_BYTES } from '~/lib/master-key-text';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Envelope encryption for vault values: each value is encrypted with AES-256-GCM under its own
 * random data key, and the data key is encrypted (wrapped) with AES-256-GCM under the master key.
 * Rotating the master key re-wraps the data keys only; the values' ciphertexts never change.
 * Only `server/vault` and `server/proxy` may import this module (eslint `no-restricted-imports`).
 */


export interface MasterKey {
  /** A short fingerprint stored beside each wrapped key, so a wrong master key is named, not guessed at. */
  readonly id: string;
  readonly bytes: Buffer;
}

/** What is stored for one value: nothing here reveals it without the master key. */
export interface Sealed {
  /** `v1.<iv>.<tag>.<ciphertext>` (base64url) of the value under its data key. */
  value: string;
  /** `v1.<iv>.<tag>.<ciphertext>` of the data key under the master key. */
  wrappedKey: string;
  /** The fingerprint of the master key that wrapped the data key. */
  masterKeyId: string;
}

export class MasterKeyMismatchError extends Error {
  override readonly name = 'MasterKeyMismatchError';
}

export function masterKeyFrom(bytes: Buffer): MasterKey {
  if (bytes.length !== MASTER_KEY_BYTES) throw new Error(`a master key is ${MASTER_KEY_BYTES} bytes, this one is ${bytes.length}`);
  const id = createHash('sha256').update('paddock-master-key-id\0').update(bytes).digest('base64url').slice(0, 16);
  return { id, bytes: Buffer.from(bytes) };
}

export function newMasterKey(): MasterKey {
  return masterKeyFrom(randomBytes(MASTER_KEY_BYTES));
}

function encrypt(key: Buffer, plain: Buffer, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

function decrypt(key: Buffer, box: string, aad: string): Buffer {
  const [v, iv, tag, body] = box.split('.');
  if (v !== 'v1' || iv === undefined || tag === undefined || body === undefined) throw new Error('sealed value: unknown format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
}

/**
 * Encrypts one value. `context` (e.g. the credential id and field) is bound as associated data,
 * so a ciphertext copied onto another row does not decrypt there.
 */
export function seal(master: MasterKey, plaintext: string, context: string): Sealed {
  const dataKey = randomBytes(32);
  try {
    return {
      value: encrypt(dataKey, Buffer.from(plaintext, 'utf8'), context),
      wrappedKey: encrypt(master.bytes, dataKey, `key:${context}`),
      masterKeyId: master.id,
    };
  } finally {
    dataKey.fill(0);
  }
}

function unwrap(master: MasterKey, sealed: Sealed, context: string): Buffer {
  if (sealed.masterKeyId !== master.id) throw new MasterKeyMismatchError(`this value was sealed under master key ${sealed.masterKeyId}, not the configured ${master.id} (PADDOCK_MASTER_KEY or the key file changed?)`);
  try {
    return decrypt(master.bytes, sealed.wrappedKey, `key:${context}`);
  } catch {
    throw new MasterKeyMismatchError('a data key does not open under the master key (tampered, or sealed for another row)');
  }
}

export function open(master: MasterKey, sealed: Sealed, context: string): string {
  const dataKey = unwrap(master, sealed, context);
  try {
    return decrypt(dataKey, sealed.value, context).toString('utf8');
  } catch {
    throw new MasterKeyMismatchError('a sealed value does not open under its data key (tampered, or sealed for another row)');
  } finally {
    dataKey.fill(0);
  }
}

/** The same value under a new master key: only the data key is re-wrapped. */
export function rewrap(from: MasterKey, to: MasterKey, sealed: Sealed, context: string): Sealed {
  const dataKey = unwrap(from, sealed, context);
  try {
    return { value: sealed.value, wrappedKey: encrypt(to.bytes, dataKey, `key:${context}`), masterKeyId: to.id };
  } finally {
    dataKey.fill(0);
  }
}
