import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** One request as the echo server received it. */
export interface SeenRequest {
  host: string;
  authorization?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface EchoServers {
  /** The test CA's certificate file: give it to the launcher as NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** `https://<address>:<port>` per address asked for, and `http://…` for plain. */
  https: Record<string, string>;
  /** A second HTTPS server per address, on another port (same certificate). */
  httpsAlt: Record<string, string>;
  http: Record<string, string>;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * HTTPS (and plain HTTP) servers on loopback addresses other than 127.0.0.1 (a sandbox's NO_PROXY
 * list sends 127.0.0.1 nowhere), with a certificate from a test CA made by openssl. Each answers
 * `{"authorized": <Authorization is "Bearer <token>">}` and remembers what it got; on `/echo` it
 * answers what it got instead, as a host that echoes requests would (httpbin's `/anything`): the
 * headers and the body, the body also URL-encoded, base64'd and base64url'd, and the Authorization
 * header back in an `X-Echo-Authorization` response header.
 */
export async function startEchoServers(addresses: string[], token: () => string): Promise<EchoServers> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-echo-'));
  const p = (f: string) => path.join(dir, f);
  const ossl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  ossl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('ca.key'), '-out', p('ca.crt'), '-days', '2', '-subj', '/CN=paddock test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  ossl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('srv.key'), '-out', p('srv.csr'), '-subj', `/CN=${addresses[0]}`);
  fs.writeFileSync(p('ext.cnf'), `subjectAltName=${addresses.map((a) => `IP:${a}`).join(',')}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  ossl('x509', '-req', '-in', p('srv.csr'), '-CA', p('ca.crt'), '-CAkey', p('ca.key'), '-CAcreateserial', '-out', p('srv.crt'), '-days', '2', '-extfile', p('ext.cnf'));
  const tls = { key: fs.readFileSync(p('srv.key')), cert: fs.readFileSync(p('srv.crt')) };
  fs.rmSync(p('ca.key'));

  const seen: SeenRequest[] = [];
  const echo = (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ host: String(req.headers.host), authorization: req.headers.authorization, headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      if (req.url?.startsWith('/echo')) {
        if (req.headers.authorization) res.setHeader('x-echo-authorization', req.headers.authorization);
        const b = Buffer.from(body);
        res.end(JSON.stringify({ headers: req.headers, body, body_url: encodeURIComponent(body), body_b64: b.toString('base64'), body_b64url: b.toString('base64url') }));
        return;
      }
      // Only whether it was authorized: a test that prints the answer leaks nothing.
      res.end(JSON.stringify({ authorized: req.headers.authorization === `Bearer ${token()}` }));
    });
  };
  const servers: http.Server[] = [];
  const listen = async (server: http.Server, host: string) => {
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, host, r));
    return (server.address() as AddressInfo).port;
  };
  const out: EchoServers = {
    caFile: p('ca.crt'),
    https: {},
    httpsAlt: {},
    http: {},
    seen,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  for (const a of addresses) {
    out.https[a] = `https://${a}:${await listen(https.createServer(tls, echo), a)}`;
    out.httpsAlt[a] = `https://${a}:${await listen(https.createServer(tls, echo), a)}`;
    out.http[a] = `http://${a}:${await listen(http.createServer(echo), a)}`;
  }
  return out;
}
