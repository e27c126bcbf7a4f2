import 'server-only';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh secret: a readable prefix and 256 random bits (base64url). */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** What is stored instead of a secret. Secrets are 256-bit random, so a plain SHA-256 is enough. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Compares two secrets in time independent of where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = createHash('sha256').update(a, 'utf8').digest();
  const y = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(x, y);
}

/** A keyed MAC of `parts`, base64url: a capability the server can re-derive without storing it. */
export function mac(key: Uint8Array, ...parts: string[]): string {
  return createHmac('sha256', key).update(parts.join('\0'), 'utf8').digest('base64url');
}
