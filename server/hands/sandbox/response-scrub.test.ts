import { describe, expect, it } from 'vitest';
import { StreamScrub, scrubPairs, scrubText } from '~/server/hands/sandbox/response-scrub';
import { type PlacedSecret, injectionRules } from '~/server/hands/sandbox/secret-injection';

const VALUE = 'sk/live+0123456789abcdef=';
const PLACEHOLDER = 'fake_value_00000000-0000-4000-8000-000000000000';
const secret: PlacedSecret = { name: 'K', value: VALUE, placeholder: PLACEHOLDER, hosts: ['api.example.com', 'alt.example.com:8443'], header: true, body: true };
const pairs = scrubPairs([secret]);
const exact = (host: string, pattern: string) => host === pattern;

describe('response scrub', () => {
  it('replaces the value with its placeholder in every spelling it knows', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const b64url = (s: string) => Buffer.from(s).toString('base64url');
    for (const [spelled, back] of [
      [VALUE, PLACEHOLDER],
      [encodeURIComponent(VALUE), encodeURIComponent(PLACEHOLDER)],
      [encodeURIComponent(VALUE).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()), PLACEHOLDER],
      [encodeURIComponent(`${VALUE} x`).replaceAll('%20', '+').slice(0, -2), PLACEHOLDER],
      [JSON.stringify(VALUE).slice(1, -1), PLACEHOLDER],
      [VALUE.replaceAll('/', '\\/'), PLACEHOLDER],
      [b64(VALUE), b64(PLACEHOLDER)],
      [b64url(VALUE), b64url(PLACEHOLDER)],
      [b64(`Bearer ${VALUE}`), b64(`Bearer ${PLACEHOLDER}`)],
      [b64url(`Bearer ${VALUE}`), b64url(`Bearer ${PLACEHOLDER}`)],
    ] as const) {
      const out = scrubText(`x ${spelled} y`, pairs);
      expect(out, spelled).not.toContain(spelled);
      if (back) expect(out).toBe(`x ${back} y`);
    }
  });

  it('leaves no trace of the value in a longer base64 text, at any byte offset', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', '{"token":"']) {
      const text = Buffer.from(`${prefix}${VALUE} and more`).toString('base64');
      expect(Buffer.from(scrubText(text, pairs), 'base64').toString('latin1'), prefix).not.toContain(VALUE);
    }
  });

  it('finds a value split across chunks of a stream, at every split point', () => {
    const text = Buffer.from(`{"echo":"${VALUE}","b64":"${Buffer.from(VALUE).toString('base64')}"}`);
    for (let cut = 1; cut < text.length; cut++) {
      const s = new StreamScrub(pairs);
      const out = Buffer.concat([s.push(text.subarray(0, cut)), s.finish(text.subarray(cut))]).toString();
      expect(out, String(cut)).toBe(`{"echo":"${PLACEHOLDER}","b64":"${Buffer.from(PLACEHOLDER).toString('base64')}"}`);
    }
  });
});

describe('injection rules', () => {
  const headersFor = (host: string, extra: Record<string, string>): Record<string, string> => ({ host, ...extra });

  it('substitutes only in Authorization by default, and only on the listed port (443 when none is listed)', () => {
    const rules = injectionRules([secret]);
    const h = headersFor('api.example.com', { authorization: `Bearer ${PLACEHOLDER}`, 'x-anything': PLACEHOLDER, 'accept-encoding': 'gzip' });
    rules.substituteInHeaders(h, 'api.example.com', exact);
    expect(h).toEqual({ host: 'api.example.com', authorization: `Bearer ${VALUE}`, 'x-anything': PLACEHOLDER });
    expect(rules.sentinelsForHost('api.example.com', exact)).toHaveLength(1);
    for (const [authority, host] of [['api.example.com:8443', 'api.example.com'], ['alt.example.com', 'alt.example.com']]) {
      const other = headersFor(authority!, { authorization: PLACEHOLDER });
      rules.substituteInHeaders(other, host!, exact);
      expect(other.authorization, authority).toBe(PLACEHOLDER);
      expect(rules.sentinelsForHost(host!, exact), authority).toEqual([]);
    }
    const alt = headersFor('alt.example.com:8443', { authorization: PLACEHOLDER });
    rules.substituteInHeaders(alt, 'alt.example.com', exact);
    expect(alt.authorization).toBe(VALUE);
  });

  it('puts nothing in a body unless the headers of the same request came first (the port is known)', () => {
    const rules = injectionRules([secret]);
    expect(rules.sentinelsForHost('api.example.com', exact)).toEqual([]);
    rules.substituteInHeaders(headersFor('api.example.com', {}), 'api.example.com', exact);
    expect(rules.sentinelsForHost('other.example.com', exact)).toEqual([]);
    rules.substituteInHeaders({}, 'api.example.com', exact); // no Host: no port known
    expect(rules.sentinelsForHost('api.example.com', exact)).toEqual([]);
  });

  it('uses the headers a credential names instead of Authorization', () => {
    const rules = injectionRules([{ ...secret, headerNames: ['x-api-key'] }]);
    const h = headersFor('api.example.com', { authorization: PLACEHOLDER, 'X-Api-Key': PLACEHOLDER });
    rules.substituteInHeaders(h, 'api.example.com', exact);
    expect(h).toMatchObject({ authorization: PLACEHOLDER, 'X-Api-Key': VALUE });
  });
});
