import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  isInitializeRequest,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { BRAIN_TOOLS } from '~/lib/tools';
import { TOOL_INPUTS, toInputSchema } from '~/lib/tool-inputs';
import { type HandLimits, type HandTools, Workspace } from '~/server/hands/paddock-hand/tools';

/**
 * paddock-hand as an MCP server: the six tools over one workspace folder, reachable over stdio
 * (see cli.ts) or Streamable HTTP behind a bearer token. Any Paddock hand client speaks to it
 * with a plain MCP client.
 */

/** The request `_meta` key under which a caller names its call, making retries idempotent. */
export const CALL_ID_META_KEY = 'paddock/call_id';

/**
 * The tool inputs: the shared zod schemas (lib/tool-inputs.ts), which also take Paddock's old
 * names as aliases. They are preprocessing schemas, which the SDK cannot list (it would advertise
 * an empty object), so `tools/list` is answered below with the canonical JSON Schemas.
 */
const INPUTS = TOOL_INPUTS;

/** How often a running bash call reports progress (when asked), so clients can keep waiting. */
const PROGRESS_EVERY_MS = 10_000;

interface Settled {
  result: CallToolResult;
  /** The call was aborted (cancelled, or its session closed): a retry should run it afresh. */
  cancelled: boolean;
}

/**
 * Results of recent calls by call id. A retry of a finished call gets the first result; a retry
 * of a running call awaits it. Shared by every session of one hand, because a retry typically
 * arrives on a new connection after the old one dropped.
 */
export class CallMemo {
  private readonly calls = new Map<string, Promise<Settled>>();

  constructor(private readonly capacity = 1000) {}

  async run(id: string | undefined, signal: AbortSignal, fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
    if (id === undefined) return fn();
    for (;;) {
      const prior = this.calls.get(id);
      if (prior === undefined) break;
      const settled = await prior;
      if (!settled.cancelled) return settled.result;
      // The first run was aborted and forgotten: this retry (or another one) runs it again.
    }
    const run: Promise<Settled> = fn().then((result) => {
      const cancelled = signal.aborted;
      if (cancelled && this.calls.get(id) === run) this.calls.delete(id);
      return { result, cancelled };
    });
    this.calls.set(id, run);
    while (this.calls.size > this.capacity) {
      const oldest = this.calls.keys().next().value;
      if (oldest === undefined) break;
      this.calls.delete(oldest);
    }
    return (await run).result;
  }
}

export interface PaddockHandOptions {
  /** The workspace folder (must exist), or tools shared with other servers (or done elsewhere: native-workspace.ts). */
  workspace: string | HandTools;
  limits?: Partial<HandLimits>;
  /** Share one memo between servers of the same hand (one per HTTP session). */
  calls?: CallMemo;
  /** Told when a tool call starts (+1) and ends (-1), with the MCP session it came on. */
  onCallActivity?: (sessionId: string | undefined, delta: 1 | -1) => void;
}

type ToolName = keyof typeof INPUTS;
type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export function createPaddockHandServer({ workspace, limits, calls = new CallMemo(), onCallActivity }: PaddockHandOptions): McpServer {
  const ws = typeof workspace === 'string' ? new Workspace(workspace, limits) : workspace;
  const server = new McpServer({ name: 'paddock-hand', version: '0.1.0' }, { capabilities: { tools: {} } });

  for (const name of Object.keys(INPUTS) as ToolName[]) {
    const description = BRAIN_TOOLS.find((t) => t.name === name)?.description ?? name;
    server.registerTool(name, { description, inputSchema: INPUTS[name] }, async (args: Record<string, unknown>, extra: Extra) => {
      const callId = extra._meta?.[CALL_ID_META_KEY];
      const progressToken = extra._meta?.progressToken;
      const run = () =>
        calls.run(typeof callId === 'string' ? callId : undefined, extra.signal, async () => {
          // Progress keeps a client's request timeout from firing on long commands
          // (`resetTimeoutOnProgress`); only sent when the caller asked for it.
          const started = Date.now();
          const ticker =
            progressToken === undefined
              ? undefined
              : setInterval(() => {
                  const seconds = Math.round((Date.now() - started) / 1000);
                  extra
                    .sendNotification({
                      method: 'notifications/progress',
                      params: { progressToken, progress: seconds, message: `${name} running for ${seconds} s` },
                    })
                    .catch(() => undefined);
                }, PROGRESS_EVERY_MS);
          try {
            const text = await ws.run(name, args, extra.signal);
            return { content: [{ type: 'text', text }] };
          } catch (e) {
            return { content: [{ type: 'text', text: e instanceof Error ? e.message : String(e) }], isError: true };
          } finally {
            if (ticker) clearInterval(ticker);
          }
        });
      onCallActivity?.(extra.sessionId, 1);
      try {
        return await run();
      } finally {
        onCallActivity?.(extra.sessionId, -1);
      }
    });
  }
  // Replaces the SDK's own tools/list handler (set by the first registerTool): it lists only plain
  // object schemas and would show these as taking no arguments.
  const listed = (Object.keys(INPUTS) as ToolName[]).map((name) => ({
    name,
    description: BRAIN_TOOLS.find((t) => t.name === name)?.description ?? name,
    inputSchema: toInputSchema(name),
  }));
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  return server;
}

// ── Streamable HTTP ─────────────────────────────────────────────────────────

export interface HttpHandOptions {
  workspace: string | HandTools;
  port: number;
  host?: string;
  /** Every request must carry `Authorization: Bearer <token>`. */
  token: string;
  limits?: Partial<HandLimits>;
  /**
   * An MCP session with no request and no running call for this long is closed (default 30 min).
   * A client that crashed never ends its session; its calls keep running and a new session can
   * collect them by call id, so only idle sessions go.
   */
  sessionIdleMs?: number;
}

export interface HttpHand {
  /** The MCP endpoint, e.g. http://127.0.0.1:4099/mcp. */
  url: string;
  close(): Promise<void>;
}

/** Tool inputs carry whole files (`write`), so allow more than the SDK's 4 MiB default. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export async function startHttpHandServer({ workspace, port, host = '127.0.0.1', token, limits, sessionIdleMs = 30 * 60_000 }: HttpHandOptions): Promise<HttpHand> {
  // Loaded only here: it touches fetch's globals at load, which pulls in all of undici (~15 MB
  // resident) — memory every stdio hand would carry for nothing.
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  // Loaded here, not at the top: a stdio hand starts from a V8 snapshot, which cannot hold node:http's handles.
  const { createServer } = await import('node:http');
  if (token === '') throw new Error('paddock-hand: refusing to serve HTTP without a token');
  const ws = typeof workspace === 'string' ? new Workspace(workspace, limits) : workspace;
  const calls = new CallMemo();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  /** Per session: open HTTP requests, running tool calls, and when it was last used. */
  const activity = new Map<string, { requests: number; calls: number; lastSeen: number }>();
  const touch = (id: string) => {
    const a = activity.get(id) ?? { requests: 0, calls: 0, lastSeen: 0 };
    a.lastSeen = Date.now();
    activity.set(id, a);
    return a;
  };
  const onCallActivity = (id: string | undefined, delta: 1 | -1) => {
    if (id) touch(id).calls += delta;
  };
  const reaper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, a] of activity) {
        if (a.requests > 0 || a.calls > 0 || now - a.lastSeen < sessionIdleMs) continue;
        activity.delete(id);
        void sessions.get(id)?.close();
      }
    },
    Math.max(50, Math.min(60_000, Math.floor(sessionIdleMs / 2))),
  );
  reaper.unref();
  const expected = digest(`Bearer ${token}`);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { pathname } = new URL(req.url ?? '/', 'http://hand');
    if (pathname === '/healthz' && req.method === 'GET') return reply(res, 200, { ok: true });
    if (pathname !== '/mcp') return reply(res, 404, { error: 'not found' });
    // Hash both sides: equal lengths for timingSafeEqual, and no early exit on length.
    if (!timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return reply(res, 401, { error: 'unauthorized' });
    }

    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJson(req);
      if (!read.ok) return reply(res, read.status, rpcError(read.status === 413 ? -32600 : -32700, read.message));
      body = read.value;
    }

    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = sessions.get(sessionId);
      if (!transport) return reply(res, 404, rpcError(-32001, 'Session not found'));
      const a = touch(sessionId);
      a.requests += 1;
      res.once('close', () => {
        a.requests -= 1;
        a.lastSeen = Date.now();
      });
      return transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return reply(res, 400, rpcError(-32000, 'Bad Request: no valid session id provided'));
    }

    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        touch(id);
      },
    });
    // Set before connect(): the protocol chains its own close handler after this one.
    transport.onclose = () => {
      if (transport.sessionId) {
        sessions.delete(transport.sessionId);
        activity.delete(transport.sessionId);
      }
    };
    await createPaddockHandServer({ workspace: ws, calls, onCallActivity }).connect(transport);
    await transport.handleRequest(req, res, body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) reply(res, 500, rpcError(-32603, e instanceof Error ? e.message : String(e)));
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${actualPort}/mcp`,
    async close() {
      clearInterval(reaper);
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      sessions.clear();
      ws.dispose();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function rpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

async function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; message: string }> {
  if (Number(req.headers['content-length']) > MAX_BODY_BYTES) {
    return { ok: false, status: 413, message: `request body over ${MAX_BODY_BYTES} bytes` };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return { ok: false, status: 413, message: `request body over ${MAX_BODY_BYTES} bytes` };
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { ok: false, status: 400, message: 'Parse error: the body is not JSON' };
  }
}
