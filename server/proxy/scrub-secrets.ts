import 'server-only';

/**
 * Credential values out of upstream text. A server may echo what it was sent, and not always
 * verbatim: the header base64-encoded (`base64("Bearer <token>")`), URL-encoded, reversed or with
 * a space between each character. Every such form of each secret, and of `Bearer <secret>`, is
 * replaced before a text is stored or served.
 */

export const REDACTED = '[redacted]';

/** Values shorter than this are not scrubbed (they would eat ordinary words). */
const MIN_SECRET = 4;

/** The literal forms of one secret that are replaced. */
export function secretForms(secret: string): string[] {
  if (secret.length < MIN_SECRET) return [];
  const forms = new Set<string>();
  for (const plain of [`Bearer ${secret}`, secret]) {
    const bytes = Buffer.from(plain, 'utf8');
    const b64 = bytes.toString('base64');
    forms.add(plain);
    forms.add(b64);
    forms.add(b64.replace(/=+$/, ''));
    forms.add(bytes.toString('base64url'));
    forms.add(encodeURIComponent(plain));
    forms.add(encodeURIComponent(plain).replace(/%20/g, '+'));
    forms.add(bytes.toString('hex'));
    forms.add([...plain].reverse().join(''));
  }
  // Longest first: `Bearer <secret>` goes whole, not as `Bearer [redacted]`.
  return [...forms].filter((f) => f.length >= MIN_SECRET).sort((a, b) => b.length - a.length);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The secret with whitespace (or zero-width characters) between its characters: `t o k e n`. */
function spacedOut(secret: string): RegExp {
  return new RegExp([...secret].map(escapeRegExp).join('[\\s\\u200b-\\u200d\\u2060\\ufeff]*'), 'gi');
}

/** `text` with every form of every secret replaced by `[redacted]`. */
export function scrubSecrets(text: string, secrets: Iterable<string>): string {
  let out = text;
  const all = [...secrets].filter((s) => s.length >= MIN_SECRET);
  for (const s of all) for (const f of secretForms(s)) out = out.split(f).join(REDACTED);
  // Hex and spaced-out copies in any letter case.
  for (const s of all) out = out.replace(spacedOut(s), REDACTED).replace(new RegExp(escapeRegExp(Buffer.from(s).toString('hex')), 'gi'), REDACTED);
  return out;
}
