/**
 * A vault's `environment_variable` secret in a real sandboxed hand (the production provisioner,
 * bubblewrap, sandbox-runtime's TLS-terminating proxy): the hand's environment holds a
 * placeholder; curl over HTTPS to an allowed host authenticates with the real value; the same
 * request to a host off the credential's list, over plain HTTP, or in a body the credential does
 * not allow carries the placeholder; the per-hand CA's key is not on the hand's disk. A value
 * goes only in the headers its credential names and only to the listed port (443 when none is
 * listed), and an upstream that echoes it hands the hand back the placeholder (issue 22, M2).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import type { HandSecret } from '~/server/hands/sandbox/hand-secret';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { type EchoServers, startEchoServers } from '~/server/hands/testing/https-echo';
import { cmdline, descendants } from '~/server/hands/testing/processes';

const TOKEN = `tok-${randomBytes(16).toString('hex')}`;
/** With characters URL-encoding changes, so its URL-encoded spelling is not its plain one. */
const BODY_KEY = `key/${randomBytes(16).toString('hex')}+x=`;
const API_KEY = `api-${randomBytes(16).toString('hex')}`;
const NO_PORT = `np-${randomBytes(16).toString('hex')}`;

let root: string;
let hand: Hand;
let echo: EchoServers;
/** On the credentials' list. (Not 127.0.0.1: the sandbox's NO_PROXY list never proxies it.) */
let allowed: string;
/** Reachable by the hand, but not a host of the secrets. */
let other: string;
let plain: string;
/** The allowed host on another port. */
let otherPort: string;
const savedCa = process.env.NODE_EXTRA_CA_CERTS;
let calls = 0;

const run = (command: string) => hand.execute('bash', { command, timeout_ms: 30_000 }, { callId: `call-${++calls}`, signal: new AbortController().signal });

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-egress-'));
  echo = await startEchoServers(['127.0.0.2', '127.0.0.3'], () => TOKEN);
  allowed = echo.https['127.0.0.2']!;
  other = echo.https['127.0.0.3']!;
  plain = echo.http['127.0.0.2']!;
  otherPort = echo.httpsAlt['127.0.0.2']!;
  const at = new URL(allowed).host; // 127.0.0.2:<port>: the credentials name the echo's port
  // The launcher's proxy verifies upstreams: it trusts what the server trusts (the test CA here).
  process.env.NODE_EXTRA_CA_CERTS = echo.caFile;
  const secrets: HandSecret[] = [
    { name: 'TOKEN', value: TOKEN, hosts: [at], header: true, body: false },
    { name: 'BODY_KEY', value: BODY_KEY, hosts: [at], header: false, body: true },
    { name: 'API_KEY', value: API_KEY, hosts: [at], header: true, headerNames: ['x-api-key'], body: false },
    // Listed without a port: 443 only, so never on the echo's port.
    { name: 'NO_PORT', value: NO_PORT, hosts: ['127.0.0.2'], header: true, body: true },
  ];
  const provisioner = createLocalHandProvisioner({ dataDir: path.join(root, 'data'), workspacesDir: path.join(root, 'ws') });
  hand = await provisioner.provision(
    'egress-1',
    { kind: 'sandbox', allowedDomains: ['127.0.0.2', '127.0.0.3'], secrets: () => Promise.resolve(secrets) },
    { signal: new AbortController().signal },
  );
}, 90_000);

afterAll(async () => {
  await hand?.close();
  await echo?.close();
  if (savedCa === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
  else process.env.NODE_EXTRA_CA_CERTS = savedCa;
  fs.rmSync(root, { recursive: true, force: true });
});

const curl = (url: string, extra = '') => run(`curl -sS --max-time 20 ${extra} -H "Authorization: Bearer $TOKEN" ${url}/; echo " EXIT=$?"`);

describe('environment_variable secrets in a sandbox hand', () => {
  it('shows the hand only a placeholder under the secret name', async () => {
    const out = await run('echo "TOKEN=$TOKEN"; echo "BODY_KEY=$BODY_KEY"; env | grep -c "^TOKEN=" ');
    expect(out).toMatch(/TOKEN=fake_value_[a-z0-9_-]+/);
    expect(out).toMatch(/BODY_KEY=fake_value_[a-z0-9_-]+/);
    expect(out).not.toContain(TOKEN);
    expect(out).not.toContain(BODY_KEY);
  });

  it('authenticates a request over HTTPS to an allowed host with the real value, in the header', async () => {
    echo.seen.length = 0;
    const out = await curl(allowed);
    expect(out).toContain('"authorized":true');
    expect(out).toContain('EXIT=0');
    expect(echo.seen.at(-1)?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(out).not.toContain(TOKEN);
  });

  it('sends the placeholder to a host that is not on the credential list', async () => {
    echo.seen.length = 0;
    const out = await curl(other);
    expect(out).toContain('"authorized":false');
    expect(echo.seen).toHaveLength(1);
    expect(echo.seen[0]!.authorization).toMatch(/^Bearer fake_value_/);
    expect(echo.seen[0]!.authorization).not.toContain(TOKEN);
  });

  it('sends the placeholder over plain HTTP, where the value would travel in the clear', async () => {
    echo.seen.length = 0;
    await curl(plain);
    expect(echo.seen).toHaveLength(1);
    expect(echo.seen[0]!.authorization).toMatch(/^Bearer fake_value_/);
  });

  it('puts a value only where its credential allows: a body-only one in bodies, a header-only one in headers', async () => {
    echo.seen.length = 0;
    await run(`curl -sS --max-time 20 -H "X-Key: $BODY_KEY" -H 'Content-Type: application/json' --data "{\\"token\\":\\"$TOKEN\\",\\"key\\":\\"$BODY_KEY\\"}" ${allowed}/`);
    expect(echo.seen).toHaveLength(1);
    const got = echo.seen[0]!;
    expect(got.body).toContain(BODY_KEY); // BODY_KEY: body yes
    expect(got.headers['x-key']).toMatch(/^fake_value_/); // BODY_KEY: header no
    expect(got.body).not.toContain(TOKEN); // TOKEN: header only, so its placeholder stays in the body
    expect(got.body).toMatch(/"token":"fake_value_/);
  });

  it('returns the placeholder, not the value, when the host echoes the header it was sent', async () => {
    echo.seen.length = 0;
    const out = await run(`curl -sS --max-time 20 -D - -H "Authorization: Bearer $TOKEN" ${allowed}/echo; echo " EXIT=$?"`);
    expect(echo.seen.at(-1)?.authorization).toBe(`Bearer ${TOKEN}`); // it went out real…
    expect(out).toContain('EXIT=0');
    expect(out).not.toContain(TOKEN); // …and came back as the placeholder, in headers and body
    expect(out).not.toContain(Buffer.from(`Bearer ${TOKEN}`).toString('base64').slice(0, 40));
    expect(out).toMatch(/x-echo-authorization: Bearer fake_value_/i);
    expect(out).toMatch(/"authorization":"Bearer fake_value_/);
  });

  it('puts a value only in the headers its credential names: Authorization by default, X-Anything never', async () => {
    echo.seen.length = 0;
    const out = await run(`curl -sS --max-time 20 -H "X-Anything: $TOKEN" -H "X-Api-Key: $API_KEY" -H "Authorization: Bearer $API_KEY" ${allowed}/echo; echo " EXIT=$?"`);
    const got = echo.seen.at(-1)!;
    expect(got.headers['x-anything']).toMatch(/^fake_value_/);
    expect(got.headers['x-api-key']).toBe(API_KEY);
    expect(got.authorization).toMatch(/^Bearer fake_value_/);
    expect(out).toContain('EXIT=0');
    expect(out).not.toContain(TOKEN);
    expect(out).not.toContain(API_KEY);
    expect(out).toMatch(/"x-api-key":"fake_value_/);
  });

  it('returns the placeholder in a body echo, plain, URL-encoded, base64 and base64url', async () => {
    const echoed = async (data: string) => {
      echo.seen.length = 0;
      const out = await run(`curl -sS --max-time 20 --data-binary "${data}" ${allowed}/echo`);
      expect(echo.seen.at(-1)?.body).toContain(BODY_KEY); // it went out real
      expect(out).not.toContain(BODY_KEY);
      return JSON.parse(out.split('\n')[0]!) as { body: string; body_url: string; body_b64: string; body_b64url: string };
    };
    const alone = await echoed('$BODY_KEY');
    expect(alone.body).toMatch(/^fake_value_/);
    expect(decodeURIComponent(alone.body_url)).toBe(alone.body);
    expect(Buffer.from(alone.body_b64, 'base64').toString()).toBe(alone.body);
    expect(Buffer.from(alone.body_b64url, 'base64url').toString()).toBe(alone.body);
    // Inside a longer text, its base64 sits at some byte offset: none of it may come back either.
    for (const prefix of ['k=', 'key=', 'x']) {
      const inText = await echoed(`${prefix}$BODY_KEY&x=1`);
      expect(inText.body).toMatch(/fake_value_/);
      expect(decodeURIComponent(inText.body_url)).toBe(inText.body);
      expect(Buffer.from(inText.body_b64, 'base64').toString('latin1')).not.toContain(BODY_KEY);
      expect(Buffer.from(inText.body_b64url, 'base64url').toString('latin1')).not.toContain(BODY_KEY);
    }
  });

  it("substitutes nothing on another port of a listed host, nor off 443 for a host listed without a port", async () => {
    echo.seen.length = 0;
    await run(`curl -sS --max-time 20 -H "Authorization: Bearer $TOKEN" ${otherPort}/`);
    await run(`curl -sS --max-time 20 -H "Authorization: Bearer $NO_PORT" --data "$NO_PORT" ${allowed}/`);
    expect(echo.seen).toHaveLength(2);
    expect(echo.seen[0]!.authorization).toMatch(/^Bearer fake_value_/);
    expect(echo.seen[1]!.authorization).toMatch(/^Bearer fake_value_/);
    expect(echo.seen[1]!.body).toMatch(/^fake_value_/);
    expect(JSON.stringify(echo.seen)).not.toContain(TOKEN);
    expect(JSON.stringify(echo.seen)).not.toContain(NO_PORT);
  });

  it('keeps the per-hand CA key off the disk the hand sees, while the hand trusts its CA', async () => {
    // The runtime's files live in one dir (the launcher's tmp): the CA's, and the trust bundle the hand reads.
    const out = await run('for v in SSL_CERT_FILE CURL_CA_BUNDLE NODE_EXTRA_CA_CERTS; do eval "f=\\$$v"; echo "$v=$f"; done; r=$(dirname "$(dirname "$SSL_CERT_FILE")"); echo "runtime=$r"; find "$r" 2>/dev/null | head -50; echo done');
    expect(out).toMatch(/SSL_CERT_FILE=\/\S+/);
    expect(out).toMatch(/srt-ca-[^/\s]*\/ca\.crt/); // the search sees the CA's own dir…
    expect(out).not.toMatch(/srt-ca-[^/\s]*\/ca\.key/); // …and no key in it
    expect(out).toContain('done');
  }, 60_000);

  it('holds the values in no process of the hand (cmdline and environment)', () => {
    const pids = descendants(process.pid);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
      let environ: string;
      try {
        environ = fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
      } catch {
        continue; // gone meanwhile
      }
      expect(environ).not.toContain(TOKEN);
      expect(environ).not.toContain(BODY_KEY);
      expect(environ).not.toContain(API_KEY);
      expect(cmdline(pid)).not.toContain(TOKEN);
    }
  });
});
