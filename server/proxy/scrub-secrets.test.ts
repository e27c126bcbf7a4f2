import { describe, expect, it } from 'vitest';
import { scrubSecrets } from '~/server/proxy/scrub-secrets';

const TOKEN = 'tok_9f2Kq7Zp-x/+3=ab';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (s: string) => Buffer.from(s).toString('base64url');

describe('scrubbing a credential from upstream text', () => {
  it.each([
    ['the exact value', TOKEN],
    ['base64 of the token', b64(TOKEN)],
    ['base64 of the token without padding', b64(TOKEN).replace(/=+$/, '')],
    ['base64url of the token', b64url(TOKEN)],
    ['base64 of "Bearer <token>"', b64(`Bearer ${TOKEN}`)],
    ['base64url of "Bearer <token>"', b64url(`Bearer ${TOKEN}`)],
    ['the URL-encoded token', encodeURIComponent(TOKEN)],
    ['the URL-encoded header', encodeURIComponent(`Bearer ${TOKEN}`)],
    ['the form-encoded header', encodeURIComponent(`Bearer ${TOKEN}`).replace(/%20/g, '+')],
    ['the token in hex, either case', Buffer.from(TOKEN).toString('hex').toUpperCase()],
    ['the token reversed', [...TOKEN].reverse().join('')],
    ['the token spaced out', [...TOKEN].join(' ')],
    ['the token with zero-width characters between', [...TOKEN].join('\u200b')],
  ])('replaces %s', (_what, form) => {
    const out = scrubSecrets(`before ${form} after`, [TOKEN]);
    expect(out).toBe('before [redacted] after');
  });

  it('leaves other text and too-short values alone', () => {
    expect(scrubSecrets('nothing secret here', [TOKEN, 'abc'])).toBe('nothing secret here');
    expect(scrubSecrets('abc abc', ['abc'])).toBe('abc abc');
  });
});
