import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A bearer-checking reverse proxy in front of an MCP server nobody here wrote: 401 unless
 * `Authorization: Bearer <current token>`, everything else passed through unbuffered (SSE
 * included). It also serves an OAuth token endpoint (`POST /token`) that swaps the refresh token
 * for a new access token, after which only the new one is accepted.
 */
export interface BearerGate {
  /** The MCP endpoint behind the gate. */
  url: string;
  tokenEndpoint: string;
  /** The access token accepted now. */
  token: string;
  refreshToken: string;
  /** Every Authorization header the gate saw on MCP requests, and every token request's form and headers. */
  seenAuth: string[];
  tokenRequests: Array<{ form: Record<string, string>; authorization: string | undefined }>;
  close(): Promise<void>;
}

export interface BearerGateOptions {
  /** The upstream MCP server's base URL (http://127.0.0.1:N). */
  upstream: string;
  token: string;
  refreshToken?: string;
  /** Required client authentication at the token endpoint (none when absent). */
  client?: { id: string; secret?: string; auth: 'none' | 'client_secret_basic' | 'client_secret_post' };
}

export async function startBearerGate(o: BearerGateOptions): Promise<BearerGate> {
  const up = new URL(o.upstream);
  let issued = 0;
  const gate: Omit<BearerGate, 'url' | 'tokenEndpoint' | 'close'> = { token: o.token, refreshToken: o.refreshToken ?? 'refresh-none', seenAuth: [], tokenRequests: [] };

  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/token') return void tokenEndpoint(req, res);
    gate.seenAuth.push(req.headers.authorization ?? '');
    if (req.headers.authorization !== `Bearer ${gate.token}`) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
      return void res.end(JSON.stringify({ error: 'invalid_token' }));
    }
    // Hop-by-hop headers stay on this hop (a forwarded `connection: close` would break the pooled upstream socket).
    const { authorization: _, host: __, connection: ___, 'keep-alive': ____, ...headers } = req.headers;
    const fwd = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      res.flushHeaders();
      r.pipe(res);
    });
    fwd.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => fwd.destroy());
    req.pipe(fwd);
  });

  async function tokenEndpoint(req: http.IncomingMessage, res: http.ServerResponse) {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const form = Object.fromEntries(new URLSearchParams(raw));
    gate.tokenRequests.push({ form, authorization: req.headers.authorization });
    const c = o.client;
    const clientOk =
      !c ||
      (c.auth === 'none' && form.client_id === c.id) ||
      (c.auth === 'client_secret_post' && form.client_id === c.id && form.client_secret === c.secret) ||
      (c.auth === 'client_secret_basic' && req.headers.authorization === `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret ?? '')}`).toString('base64')}`);
    if (!clientOk || form.grant_type !== 'refresh_token' || form.refresh_token !== gate.refreshToken) {
      res.writeHead(400, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: 'invalid_grant' }));
    }
    issued += 1;
    gate.token = `access-refreshed-${issued}-${Math.random().toString(36).slice(2)}`;
    gate.refreshToken = `refresh-rotated-${issued}-${Math.random().toString(36).slice(2)}`;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: gate.token, token_type: 'Bearer', expires_in: 3600, refresh_token: gate.refreshToken }));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(gate, {
    url: `${base}/mcp`,
    tokenEndpoint: `${base}/token`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}
