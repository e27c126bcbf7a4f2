import 'server-only';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { FilesystemAdapter } from '~/server/hands/mcp-filesystem-adapter';
import { type ExecuteContext, type Hand, type HandKind, type ToolSpec, ToolError } from '~/lib/hand';
import { BRAIN_TOOLS } from '~/lib/tools';
import { logger } from '~/server/log';

/**
 * Any MCP server as a hand. A server that offers the brain's tools by name (paddock-hand) is
 * passed through; `@modelcontextprotocol/server-filesystem` is adapted (see `FilesystemAdapter`);
 * anything else serves what it can and refuses the rest with a message the model can act on.
 */
export interface McpHandOptions {
  id: string;
  kind: HandKind;
  transport: Transport;
  /** Per call; progress notifications restart it. Default 10 min. */
  callTimeoutMs?: number;
  /** Aborts the handshake (connect + tool listing). */
  signal?: AbortSignal;
  /** Extra words for a loss reason, e.g. the last stderr lines of a stdio server. */
  lossDetail?: () => string | undefined;
  /** How often an idle hand is pinged so a silent death is noticed (0 = never). Default 30 s. */
  heartbeatMs?: number;
}

const DEFAULT_CALL_TIMEOUT_MS = 10 * 60_000;
const CONNECT_TIMEOUT_MS = 30_000;
const PROBE_TIMEOUT_MS = 5_000;
const TERMINATE_TIMEOUT_MS = 2_000;
const CALL_ID_META = 'paddock/call_id';
const log = logger('mcp-hand');

type CallResult = Awaited<ReturnType<Client['callTool']>>;

/** The plain text a model reads from a tool result; non-text blocks become short placeholders. */
function resultText(raw: CallResult): string {
  // The SDK's return type also admits the pre-2024 `{ toolResult }` shape.
  if (!Array.isArray(raw.content)) return JSON.stringify(raw.toolResult ?? raw);
  const r = raw as CallToolResult;
  const parts = r.content.map((b) => {
    switch (b.type) {
      case 'text':
        return b.text;
      case 'image':
        return `[image ${b.mimeType}]`;
      case 'audio':
        return `[audio ${b.mimeType}]`;
      case 'resource':
        return 'text' in b.resource ? b.resource.text : `[resource ${b.resource.uri}]`;
      case 'resource_link':
        return `[resource_link ${b.uri}]`;
    }
  });
  if (parts.length === 0 && r.structuredContent) return JSON.stringify(r.structuredContent);
  return parts.join('\n');
}

/** An error's message with its cause (fetch hides ECONNREFUSED there). */
export function errorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause ? (typeof cause.code === 'string' ? cause.code : typeof cause.message === 'string' ? cause.message : '') : '';
  return detail && !e.message.includes(detail) ? `${e.message} (${detail})` : e.message;
}

/** An MCP protocol error with this code (`code` is a plain number on the error). */
export function isMcpError(e: unknown, code: ErrorCode): boolean {
  return e instanceof McpError && e.code === Number(code);
}

/** An MCP hand whose name can change once a session takes it (a pooled hand is started unnamed). */
export type NamedMcpHand = Hand & { rename(id: string): void };

export async function connectMcpHand(opts: McpHandOptions): Promise<NamedMcpHand> {
  const client = new Client({ name: 'paddock', version: '0.1.0' }, { capabilities: {} });
  const hand = new McpHand(opts, client);
  try {
    await client.connect(opts.transport, { signal: opts.signal, timeout: CONNECT_TIMEOUT_MS });
    await hand.init(opts.signal);
    return hand;
  } catch (e) {
    await hand.close();
    throw e;
  }
}

class McpHand implements Hand {
  /** The name its error texts use: the session's (`sandbox-3`), the same as the log's. */
  id: string;
  readonly kind: HandKind;
  readonly lost: Promise<string>;
  private settleLost!: (reason: string) => void;
  private lostReason: string | undefined;
  private closed = false;
  private ready = false;
  private probing: Promise<void> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private readonly lostListeners = new Set<(reason: string) => void>();
  private serverTools = new Set<string>();
  private fs: FilesystemAdapter | undefined;
  private serverName = 'MCP server';

  constructor(
    private readonly opts: McpHandOptions,
    private readonly client: Client,
  ) {
    this.id = opts.id;
    this.kind = opts.kind;
    this.lost = new Promise<string>((resolve) => (this.settleLost = resolve));
    // Set before connect: Protocol calls these from its own transport handlers.
    client.onclose = () => this.markLost('its connection closed');
    client.onerror = (e) => {
      // Transport errors are often transient (a garbled line, an SSE reconnect): ask the
      // server whether it is still there before declaring the hand lost.
      if (!this.closed && this.lostReason === undefined) void this.probe(errorText(e));
    };
  }

  rename(id: string): void {
    this.id = id;
  }

  async init(signal?: AbortSignal): Promise<void> {
    this.serverName = this.client.getServerVersion()?.name ?? 'MCP server';
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor ? { cursor } : undefined, { signal, timeout: CONNECT_TIMEOUT_MS });
      for (const t of page.tools) this.serverTools.add(t.name);
      cursor = page.nextCursor;
    } while (cursor);
    if (FilesystemAdapter.fits(this.serverTools)) {
      const ctx = { callId: 'paddock-connect', signal: signal ?? new AbortController().signal };
      this.fs = await FilesystemAdapter.create(this.serverTools, (t, a, c) => this.call(t, t, a, c), ctx);
    }
    this.ready = true;
    const every = this.opts.heartbeatMs ?? 30_000;
    if (every > 0) {
      this.heartbeat = setInterval(() => void this.probe('heartbeat'), every);
      this.heartbeat.unref();
    }
  }

  private serves(name: string): boolean {
    return this.serverTools.has(name) || (this.fs?.serves(name) ?? false);
  }

  tools(): Promise<ToolSpec[]> {
    return Promise.resolve(BRAIN_TOOLS.filter((t) => this.serves(t.name)));
  }

  async execute(name: string, input: unknown, ctx: ExecuteContext): Promise<string> {
    if (this.lostReason !== undefined) throw this.lostError(this.lostReason);
    if (this.closed) throw new Error(`hand ${this.id} is closed`);
    if (this.serverTools.has(name)) {
      if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ToolError(`${name}: input must be an object`);
      return this.call(name, name, input as Record<string, unknown>, ctx);
    }
    if (this.fs?.serves(name)) return this.fs.run(name, input, ctx);
    const offers = BRAIN_TOOLS.map((t) => t.name).filter((n) => this.serves(n));
    const list = offers.length > 0 ? offers.join(', ') : [...this.serverTools].join(', ') || 'no tools';
    const what = name === 'bash' ? 'has no shell' : `cannot run ${name}`;
    throw new ToolError(`hand ${this.id} (${this.serverName}) ${what}; it offers: ${list}`);
  }

  /** One tool call, raced against loss so a dead hand fails the call at once, not at the timeout. */
  private async call(brainName: string, tool: string, args: Record<string, unknown>, ctx: ExecuteContext): Promise<string> {
    if (this.lostReason !== undefined) throw this.lostError(this.lostReason);
    const timeout = this.opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    const ac = new AbortController();
    const onAbort = () => ac.abort(ctx.signal.reason);
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    let stopWatching: () => void = () => undefined;
    try {
      const result = await new Promise<CallResult>((resolve, reject) => {
        stopWatching = this.onLost((reason) => {
          reject(this.lostError(reason));
          ac.abort(); // drop the SDK's pending request
        });
        this.client
          .callTool({ name: tool, arguments: args, _meta: { [CALL_ID_META]: ctx.callId } }, undefined, {
            signal: ac.signal,
            timeout,
            resetTimeoutOnProgress: true,
          })
          .then(resolve, reject);
      });
      const text = resultText(result);
      if ('isError' in result && result.isError) throw new ToolError(text || `${brainName} failed`);
      return text;
    } catch (e) {
      throw await this.callError(e, tool, timeout, ctx);
    } finally {
      stopWatching();
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  private async callError(e: unknown, tool: string, timeout: number, ctx: ExecuteContext): Promise<Error> {
    if (e instanceof ToolError) return e;
    if (this.lostReason !== undefined) return this.lostError(this.lostReason);
    if (ctx.signal.aborted) return new Error(`hand ${this.id}: ${tool} was cancelled`);
    if (e instanceof McpError) {
      if (isMcpError(e, ErrorCode.RequestTimeout)) return new Error(`hand ${this.id}: ${tool} did not finish within ${timeout} ms`);
      if ([ErrorCode.InvalidParams, ErrorCode.MethodNotFound, ErrorCode.InvalidRequest].some((c) => isMcpError(e, c))) {
        return new ToolError(`${tool}: ${e.message}`); // the model sent something the server rejects
      }
      if (!isMcpError(e, ErrorCode.ConnectionClosed)) return new Error(`hand ${this.id}: ${tool}: ${e.message}`);
    }
    // A transport failure (fetch failed, connection closed): find out whether the hand is gone.
    await this.probe(errorText(e));
    if (this.lostReason !== undefined) return this.lostError(this.lostReason);
    return new Error(`hand ${this.id}: ${tool}: ${errorText(e)}`);
  }

  private lostError(reason: string): Error {
    return new Error(`hand ${this.id} was lost: ${reason}`);
  }

  private onLost(fn: (reason: string) => void): () => void {
    if (this.lostReason !== undefined) {
      fn(this.lostReason);
      return () => undefined;
    }
    this.lostListeners.add(fn);
    return () => this.lostListeners.delete(fn);
  }

  /** Pings the server; a failure means the hand is gone. One probe at a time. */
  private probe(cause: string): Promise<void> {
    if (this.closed || this.lostReason !== undefined) return Promise.resolve();
    this.probing ??= this.client
      .ping({ timeout: PROBE_TIMEOUT_MS })
      .then(
        () => undefined,
        (e: unknown) => this.markLost(cause === 'heartbeat' ? `it stopped answering (${errorText(e)})` : `${cause}; ping failed: ${errorText(e)}`),
      )
      .finally(() => (this.probing = undefined));
    return this.probing;
  }

  private markLost(reason: string): void {
    if (this.closed || this.lostReason !== undefined) return;
    const detail = this.opts.lossDetail?.();
    this.lostReason = detail ? `${reason}; ${detail}` : reason;
    if (this.ready) log.warn('hand lost', { hand: this.id, reason: this.lostReason });
    this.stopHeartbeat();
    this.settleLost(this.lostReason);
    for (const fn of [...this.lostListeners]) fn(this.lostReason);
    this.lostListeners.clear();
    // Stop any reconnect timers and the child process; onclose is ignored from here on.
    void this.client.close().catch(() => undefined);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const wasLive = this.lostReason === undefined;
    this.closed = true;
    this.stopHeartbeat();
    // Streamable HTTP: end the session so the server frees it now, not at its idle timeout.
    const t = this.opts.transport as Transport & { terminateSession?: () => Promise<void> };
    if (wasLive && typeof t.terminateSession === 'function') {
      const done = t.terminateSession().catch(() => undefined);
      await Promise.race([done, new Promise((r) => setTimeout(r, TERMINATE_TIMEOUT_MS).unref())]);
    }
    await this.client.close().catch(() => undefined);
  }
}
