import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

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
    // As Node's own parser sees it: a body only when one is announced (a bodiless DELETE has none;
    // a stream made for it anyway outlives the response and breaks the kept-alive connection).
    const announced = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && announced;
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method: req.method ?? 'GET',
      headers,
      signal: abort.signal,
      ...(hasBody ? { body: webBody(req), duplex: 'half' } : {}),
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

/**
 * The request's body as a web stream. Not `Readable.toWeb`: a handler that cancels a body it will
 * not read (a refusal) makes that enqueue into a closed stream when the rest arrives (an uncaught
 * ERR_INVALID_STATE); here a cancelled body is drained and dropped.
 */
function webBody(req: http.IncomingMessage): ReadableStream<Uint8Array> {
  let closed = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on('data', (chunk: Buffer) => {
        if (closed) return;
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 1) <= 0) req.pause();
      });
      req.once('end', () => {
        if (!closed) controller.close();
        closed = true;
      });
      req.once('error', (e) => {
        if (!closed) controller.error(e);
        closed = true;
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      closed = true;
      req.resume();
    },
  });
}
