import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';

export interface FetchServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves a fetch-style handler (what a Next route runs) over real HTTP on a free port, so tests
 * drive it with real clients (the official SDK) and streams behave as they do in `next start`.
 */
export async function serveFetch(handler: (req: Request) => Promise<Response>): Promise<FetchServer> {
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === 'string') headers.set(k, v);
      else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method: req.method ?? 'GET',
      headers,
      signal: abort.signal,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } : {}),
    });
    handler(request).then(
      async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        if (!response.body) return void res.end();
        res.flushHeaders();
        const reader = response.body.getReader();
        abort.signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true });
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            res.write(value);
          }
        } catch {
          // the client went away
        }
        res.end();
      },
      (e: unknown) => {
        res.writeHead(599).end(String(e));
      },
    );
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
