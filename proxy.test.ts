import { unstable_doesMiddlewareMatch } from 'next/experimental/testing/server';
import { NextRequest } from 'next/server';
import { describe, expect, it } from 'vitest';
import { PROXY_MAX_BODY_BYTES } from '~/lib/body-limits';
import nextConfig from '~/next.config';
import { config, proxy } from '~/proxy';

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

const request = (method: string, path: string, headers: Record<string, string> = {}) =>
  proxy(new NextRequest(`http://localhost:3000${path}`, { method, headers: { host: 'localhost:3000', origin: 'http://localhost:3000', 'content-type': 'application/json', ...headers } }));
const matches = (url: string) => unstable_doesMiddlewareMatch({ config, url });
const MALFORMED = ['%ZZ', '%', 'a%2', '%C3%28', '%FF', '%E0%A4%A', '%80'];

describe('malformed addresses', () => {
  it('answers a path with a malformed percent-escape 400 on every route prefix (Next would answer a bare 500)', async () => {
    for (const prefix of ['/share', '/embed', '/s', '/agents', '/settings', '/auth/signin', '']) {
      for (const bad of MALFORMED) {
        for (const method of ['GET', 'POST']) {
          const res = request(method, `${prefix}/${bad}`);
          expect(res.status, `${method} ${prefix}/${bad}`).toBe(400);
          expect(await res.json()).toEqual({ error: { message: 'malformed percent-escape in the request path', status: 400 } });
        }
      }
    }
  });

  it("answers a malformed /v1 path 400 in the REST API's error shape, with a request-id", async () => {
    const res = request('GET', '/v1/%ZZ');
    expect(res.status).toBe(400);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('runs on an API path whose escape is not plain ASCII (so a malformed one is refused here), and on no other API path', () => {
    for (const bad of MALFORMED) {
      expect(matches(`http://localhost:3000/v1/${bad}`), bad).toBe(true);
      expect(matches(`http://localhost:3000/api/trpc/${bad}`), bad).toBe(true);
    }
    for (const fine of ['/v1/sessions', '/v1/agents/agent%5F1', '/v1/vaults/v%2Fx/credentials', '/api/trpc/sessions.list', '/api/trpc/a,b?batch=1']) {
      expect(matches(`http://localhost:3000${fine}`), fine).toBe(false);
    }
  });
});

describe('bodies through the proxy layer (which Next buffers before any handler)', () => {
  it('does not run on the two APIs, whose handlers cap their bodies as they stream', () => {
    for (const path of ['/v1/sessions', '/v1/sessions/sesn_1/events', '/api/trpc/sessions.create', '/api/trpc/widget.open']) expect(matches(`http://localhost:3000${path}`), path).toBe(false);
    for (const path of ['/', '/s/sesn_1', '/share/x', '/embed/agent_default', '/auth/signout', '/signin', '/v1', '/api/trpcx']) expect(matches(`http://localhost:3000${path}`), path).toBe(true);
  });

  it('refuses a body over its cap from the Content-Length, and a body of unknown length, before it is held', async () => {
    const over = request('POST', '/auth/signout', { 'content-length': String(PROXY_MAX_BODY_BYTES + 1) });
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ error: { status: 413 } });
    expect(request('POST', '/', { 'content-length': String(10 * 1024 * 1024) }).status).toBe(413);
    expect(request('PUT', '/s/x', { 'transfer-encoding': 'chunked' }).status).toBe(411);
    expect(request('OPTIONS', '/', { 'content-length': String(PROXY_MAX_BODY_BYTES + 1) }).status).toBe(413);
    expect(request('POST', '/auth/signout', { 'content-length': '2' }).status).toBe(200);
    expect(request('GET', '/').status).toBe(200);
  });

  it('caps what Next copies of a body for it at the same size it refuses above', () => {
    expect(nextConfig.experimental?.proxyClientMaxBodySize).toBe(PROXY_MAX_BODY_BYTES);
    expect(PROXY_MAX_BODY_BYTES).toBeLessThanOrEqual(64 * 1024);
  });
});
