/**
 * A vault's `environment_variable` secret in a real sandboxed hand (the production provisioner,
 * bubblewrap, sandbox-runtime's TLS-terminating proxy): the hand's environment holds a
 * placeholder; curl over HTTPS to an allowed host authenticates with the real value; the same
 * request to a host off the credential's list, over plain HTTP, or in a body the credential does
 * not allow carries the placeholder; the per-hand CA's key is not on the hand's disk.
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
const BODY_KEY = `key-${randomBytes(16).toString('hex')}`;

let root: string;
let hand: Hand;
let echo: EchoServers;
/** On the credentials' list. (Not 127.0.0.1: the sandbox's NO_PROXY list never proxies it.) */
let allowed: string;
/** Reachable by the hand, but not a host of the secrets. */
let other: string;
let plain: string;
const savedCa = process.env.NODE_EXTRA_CA_CERTS;
let calls = 0;

const run = (command: string) => hand.execute('bash', { command, timeout_ms: 30_000 }, { callId: `call-${++calls}`, signal: new AbortController().signal });

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-egress-'));
  echo = await startEchoServers(['127.0.0.2', '127.0.0.3'], () => TOKEN);
  allowed = echo.https['127.0.0.2']!;
  other = echo.https['127.0.0.3']!;
  plain = echo.http['127.0.0.2']!;
  // The launcher's proxy verifies upstreams: it trusts what the server trusts (the test CA here).
  process.env.NODE_EXTRA_CA_CERTS = echo.caFile;
  const secrets: HandSecret[] = [
    { name: 'TOKEN', value: TOKEN, hosts: ['127.0.0.2'], header: true, body: false },
    { name: 'BODY_KEY', value: BODY_KEY, hosts: ['127.0.0.2'], header: false, body: true },
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
      expect(cmdline(pid)).not.toContain(TOKEN);
    }
  });
});
