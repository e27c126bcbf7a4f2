import { describe, expect, it } from 'vitest';
import { safeNext, signInPath } from '~/server/access/next-path';

const BASE = 'http://localhost:3000';
/** Where a browser on BASE goes when told `Location: <location>`. */
const landsOn = (location: string) => new URL(location, BASE);

/** Each spelling a browser could resolve to another site, or that a decoding page could. */
const HOSTILE = [
  '//evil.example',
  '/\\evil.example',
  'https://evil.example',
  'javascript:alert(1)',
  '/\t/evil.example',
  '/\t\\evil.example',
  '/\n/evil.example',
  '/\r/evil.example',
  '/\u0000/evil.example',
  '/\u000b/evil.example',
  '/\u000c/evil.example',
  '/\u001f/evil.example',
  '/\u007f/evil.example',
  '\t//evil.example',
  '/.//evil.example',
  '/..//evil.example',
  '/%2e%2e//evil.example',
  '/%2E//evil.example',
  '/%2F/evil.example',
  '/%2f%2fevil.example',
  '/%5Cevil.example',
  '/%09/evil.example',
  '/%09%5Cevil.example',
  '/%0d%0aSet-Cookie:%20a=b',
  '/%00',
  '/%ZZ',
  `/${'a'.repeat(5_000)}`,
];

/** Lookalikes of `/` and `\`: harmless once percent-encoded by the URL parser, but never a raw header. */
const LOOKALIKES = ['/\uff0f\uff0fevil.example', '/\u2215\u2215evil.example', '/\u29f8evil.example', '/\ufe68evil.example', '/\u2044\u2044evil.example'];

describe('safeNext', () => {
  it('refuses a next path with a TAB, which browsers drop to leave //evil.example (the review repro)', () => {
    expect(safeNext('/\t/evil.example')).toBe('/');
    expect(safeNext('/\t\\evil.example')).toBe('/');
  });

  it('refuses every ASCII control character, a backslash and every path that resolves off the site, raw or percent-encoded', () => {
    for (const c of [...Array.from({ length: 0x20 }, (_, i) => i), 0x7f]) expect(safeNext(`/a${String.fromCharCode(c)}b`), `0x${c.toString(16)}`).toBe('/');
    for (const path of HOSTILE) expect(safeNext(path), JSON.stringify(path)).toBe('/');
  });

  it('keeps Unicode lookalikes of a slash on this site, percent-encoded so they fit a Location header', () => {
    for (const path of LOOKALIKES) {
      const next = safeNext(path);
      expect(next, JSON.stringify(path)).toMatch(/^\/[\x21-\x7e]*$/);
      expect(landsOn(next).origin).toBe(BASE);
      expect(() => new Headers({ location: next })).not.toThrow();
    }
  });

  it('keeps a path on this site, with its query and fragment', () => {
    for (const path of ['/', '/s/sesn_01', '/settings?x=1', '/agents/agent_1#tools', '/s/a%2Fb']) expect(safeNext(path)).toBe(path);
  });

  it('answers the sign-in page for a hostile path and keeps an own one', () => {
    expect(signInPath('/\t/evil.example')).toBe('/signin');
    expect(signInPath('/s/sesn_01?tab=files')).toBe('/signin?next=%2Fs%2Fsesn_01%3Ftab%3Dfiles');
  });
});
