import { NextRequest } from 'next/server';
import { describe, expect, it } from 'vitest';
import { proxy } from '~/proxy';

const token = (expiry?: number) => `pds_${'A'.repeat(43)}${expiry === undefined ? '' : `.${expiry.toString(36)}`}`;
const get = (path: string) => proxy(new NextRequest(`http://localhost:3000${path}`, { headers: { host: 'localhost:3000' } }));

describe('the request guard on share links', () => {
  it('answers an expired link 410 before any page runs, never indexed and with no referrer', async () => {
    const res = get(`/share/${token(Date.now() - 1_000)}`);
    expect(res.status).toBe(410);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-robots-tag')).toContain('noindex');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toContain('This link has expired');
  });

  it('lets a link that has not expired, or never expires, through to its page (which looks it up)', () => {
    for (const t of [token(Date.now() + 60_000), token(), 'garbage']) expect(get(`/share/${t}`).status, t).toBe(200);
  });
});

describe('the docs widget frame', () => {
  it('may be framed by the one origin it was opened for, and by nothing when that is no origin', () => {
    expect(get('/embed/agent_x?origin=http%3A%2F%2F127.0.0.1%3A4020&theme=dark').headers.get('content-security-policy')).toBe('frame-ancestors http://127.0.0.1:4020');
    for (const bad of ['', '?origin=*', "?origin=http%3A%2F%2Fa.example%20'self'", '?origin=javascript%3Aalert(1)', '?origin=https%3A%2F%2Fa.example%2Fpath']) {
      expect(get(`/embed/agent_x${bad}`).headers.get('content-security-policy'), bad).toBe("frame-ancestors 'none'");
    }
    expect(get('/').headers.get('content-security-policy')).toBeNull();
  });
});
