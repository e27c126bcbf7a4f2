import http from 'node:http';

/**
 * A minimal load balancer for one origin in front of several `next start` instances: requests go
 * to the first instance that answers; a refused connection moves on to the next (and sticks).
 */
export class FailoverProxy {
  private server: http.Server | null = null;
  private current = 0;

  constructor(
    readonly port: number,
    private readonly targets: number[],
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get target(): number {
    return this.targets[this.current]!;
  }

  start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.forward(req, res, Buffer.concat(chunks), 0));
    });
    return new Promise((resolve) => this.server!.listen(this.port, '127.0.0.1', () => resolve()));
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, attempt: number): void {
    const up = http.request(
      { host: '127.0.0.1', port: this.target, path: req.url, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${this.target}` } },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        // An instance that dies mid-stream cuts the response; the client reconnects.
        upRes.on('error', () => res.destroy());
      },
    );
    let gone = false;
    up.on('error', () => {
      if (gone) return;
      if (res.headersSent) return void res.destroy();
      if (attempt < this.targets.length - 1) {
        this.current = (this.current + 1) % this.targets.length;
        this.forward(req, res, body, attempt + 1);
      } else {
        res.writeHead(502).end('no instance answered');
      }
    });
    // The browser went away (e.g. an SSE stream it closed): drop the upstream request too.
    res.on('close', () => {
      if (res.writableFinished) return;
      gone = true;
      up.destroy();
    });
    up.end(body);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
