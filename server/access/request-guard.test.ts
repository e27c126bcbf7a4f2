import { describe, expect, it } from 'vitest';
import { guardPolicyFromEnv, guardRequest, isAllowedHost } from '~/server/access/request-guard';

const none = { allowedHosts: [], allowedOrigins: [] };
const req = (method: string, headers: Record<string, string>) => ({ method, headers: new Headers(headers) });

describe('request guard', () => {
  it('answers loopback names on any port and nothing else by default', () => {
    for (const h of ['localhost', 'localhost:3000', '127.0.0.1:3000', '127.8.9.1', '[::1]:3000', 'app.localhost:80']) expect(isAllowedHost(h, none)).toBe(true);
    for (const h of ['rebind.attacker.example', 'rebind.attacker.example:3000', '10.0.0.5:3000', 'localhost.attacker.example', '127.0.0.1.nip.io', '', ':3000']) expect(isAllowedHost(h, none)).toBe(false);
  });

  it('refuses a DNS-rebinding Host even for a read', () => {
    expect(guardRequest(req('GET', { host: 'rebind.attacker.example:3000' }), none)).toMatchObject({ status: 421 });
    expect(guardRequest(req('GET', {}), none)).toMatchObject({ status: 400 });
  });

  it('answers the public URL and the allowed hosts the operator configured', () => {
    const p = guardPolicyFromEnv({ PADDOCK_PUBLIC_URL: 'https://paddock.example.com', PADDOCK_ALLOWED_HOSTS: 'box.lan:8080, Other.Example' });
    expect(isAllowedHost('paddock.example.com', p)).toBe(true);
    expect(isAllowedHost('box.lan:8080', p)).toBe(true);
    expect(isAllowedHost('box.lan:9999', p)).toBe(false);
    expect(isAllowedHost('other.example:1234', p)).toBe(true);
    expect(guardRequest(req('POST', { host: 'paddock.example.com', origin: 'https://paddock.example.com', 'content-type': 'application/json' }), p)).toBeNull();
  });

  it('lets our own pages write and refuses every cross-site write', () => {
    const own = { host: 'localhost:3000', 'content-type': 'application/json' };
    expect(guardRequest(req('POST', { ...own, origin: 'http://localhost:3000' }), none)).toBeNull();
    expect(guardRequest(req('POST', { ...own, origin: 'http://evil.example' }), none)).toMatchObject({ status: 403 });
    expect(guardRequest(req('POST', { ...own, origin: 'http://localhost:4000' }), none)).toMatchObject({ status: 403 });
    expect(guardRequest(req('POST', { ...own, origin: 'null' }), none)).toMatchObject({ status: 403 });
    expect(guardRequest(req('DELETE', { ...own, origin: 'http://localhost:3000', 'sec-fetch-site': 'cross-site' }), none)).toMatchObject({ status: 403 });
  });

  it('refuses form, multipart and text/plain bodies even from our own origin', () => {
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain;charset=UTF-8']) {
      expect(guardRequest(req('POST', { host: 'localhost:3000', origin: 'http://localhost:3000', 'content-type': type }), none)).toMatchObject({ status: 415 });
    }
  });

  it('takes a multipart upload only on an upload route and only from a program with a key: a browser form post stays refused', () => {
    const form = { host: 'localhost:3000', 'content-type': 'multipart/form-data; boundary=x' };
    expect(guardRequest({ ...req('POST', { ...form, 'x-api-key': 'pdk_x' }), upload: true }, none)).toBeNull();
    expect(guardRequest({ ...req('POST', { ...form, origin: 'http://localhost:3000' }), upload: true }, none)).toMatchObject({ status: 415 });
    expect(guardRequest({ ...req('POST', { ...form, origin: 'http://evil.example', 'x-api-key': 'pdk_x' }), upload: true }, none)).toMatchObject({ status: 403 });
    expect(guardRequest(req('POST', { ...form, 'x-api-key': 'pdk_x' }), none)).toMatchObject({ status: 415 });
  });

  it('lets a program without an Origin write only if it sends a key', () => {
    expect(guardRequest(req('POST', { host: 'localhost:3000', 'content-type': 'application/json' }), none)).toMatchObject({ status: 403 });
    expect(guardRequest(req('POST', { host: 'localhost:3000', 'content-type': 'application/json', authorization: 'Bearer pdk_x' }), none)).toBeNull();
    expect(guardRequest(req('POST', { host: 'localhost:3000', 'content-type': 'application/json', 'x-api-key': 'pdk_x' }), none)).toBeNull();
  });
});
