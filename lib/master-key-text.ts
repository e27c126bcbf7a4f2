/** A vault master key's length: 256 bits. */
export const MASTER_KEY_BYTES = 32;

/** The 32 bytes of a vault master key written as 64 hex characters or base64 (standard or url-safe); null otherwise. */
export function decodeMasterKeyText(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) return null;
  const bytes = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === MASTER_KEY_BYTES ? bytes : null;
}
