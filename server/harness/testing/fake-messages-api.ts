/**
 * A scripted fake of the Anthropic Messages API that speaks the real HTTP + SSE wire protocol,
 * so tests drive the real `@anthropic-ai/sdk` parser (retries, error classes, stream assembly)
 * instead of a mocked client. node:http only: it also runs as a standalone e2e server
 * (scripts/fake-anthropic.ts) with HTTP control routes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PromptCache } from '~/server/harness/testing/prompt-cache';

export type ScriptStep =
  | { kind: 'text'; text: string; chunks?: number }
  | { kind: 'thinking'; thinking: string; signature?: string; chunks?: number }
  | { kind: 'tool_use'; name: string; input: Record<string, unknown>; id?: string; chunks?: number };

export interface ScriptedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export type ErrorStatus = 429 | 500 | 529 | 400 | 401;

/**
 * A scripted response may be kept for the request whose system prompt contains this text (the
 * first such one queued is served; unmarked ones still go in order): threads of one session ask
 * the model at the same moment, and each must get its own agent's answer.
 */
export interface ScriptMatch {
  forSystem?: string;
}

type ScriptedKind =
  | {
      kind: 'message';
      steps: ScriptStep[];
      stop_reason?: 'end_turn' | 'tool_use' | 'max_tokens';
      /** Wait before sending headers (slow time-to-first-byte). */
      delayMs?: number;
      /** Wait between SSE frames. */
      chunkDelayMs?: number;
      /** The content is streamed, then the message ends (message_delta, message_stop) only once this settles. */
      endAfter?: Promise<unknown>;
      usage?: ScriptedUsage;
      /** Leave the cache counters out of usage entirely, as Ollama and llama.cpp do. */
      omitCacheUsage?: boolean;
    }
  | {
      kind: 'error';
      status: ErrorStatus;
      errorType?: string;
      message?: string;
      /**
       * For streaming requests: answer 200, send message_start, then an SSE `event: error` frame,
       * which is how the real API reports overload once a stream has begun.
       */
      midStream?: boolean;
    }
  | { kind: 'drop'; afterSteps?: number; steps?: ScriptStep[] }
  | { kind: 'hang' };

export type ScriptedResponse = ScriptedKind & ScriptMatch;

export type MessageOptions = Omit<Extract<ScriptedResponse, { kind: 'message' }>, 'kind' | 'steps' | 'forSystem'>;

/** A request's system prompt as text (a string, or text blocks). */
function systemTextOf(body: RecordedBody | null): string {
  const system = (body as { system?: unknown } | null)?.system;
  if (typeof system === 'string') return system;
  return Array.isArray(system) ? system.map((b) => (b && typeof b === 'object' && typeof (b as { text?: unknown }).text === 'string' ? (b as { text: string }).text : '')).join('\n') : '';
}

/** The parsed JSON body of a request; loose on purpose, tests read whatever they assert on. */
export interface RecordedBody {
  model?: string;
  stream?: boolean;
  messages?: unknown[];
  system?: unknown;
  tools?: unknown[];
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Lowercased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: RecordedBody | null;
  auth: 'bearer' | 'x-api-key' | null;
  apiKey: string | null;
  receivedAt: number;
}

export type Fallback = (req: RecordedRequest) => ScriptedResponse;

export interface FakeMessagesApi {
  /** http://127.0.0.1:PORT — use as ANTHROPIC_BASE_URL / baseURL. */
  url: string;
  port: number;
  /** FIFO; each POST /v1/messages consumes one. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** Used when the queue is empty; null restores the default (a 500 naming "no scripted response"). */
  setFallback(fn: Fallback | null): void;
  /** Scripted responses not yet consumed. */
  pending(): number;
  /** Clears the queue and the recorded requests (keeps the fallback). */
  reset(): void;
  /** Every API request, recorded before it is answered. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface FakeMessagesApiOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** If set, 401 authentication_error unless `Authorization: Bearer <key>` or `x-api-key: <key>` matches. */
  requireKey?: string;
  /** Serve /_control/enqueue, /_control/reset, /_control/requests (for e2e runners). */
  control?: boolean;
  fallback?: Fallback;
  /**
   * Answer usage (for responses that script none) from a model of the API's prompt cache
   * (prompt-cache.ts): cache reads and writes earned by the requests' shared prefixes.
   */
  promptCache?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Builders

export function textResponse(text: string, opts: MessageOptions & { chunks?: number } = {}): ScriptedResponse {
  const { chunks, ...message } = opts;
  return { kind: 'message', steps: [{ kind: 'text', text, ...(chunks === undefined ? {} : { chunks }) }], ...message };
}

export function toolUseResponse(
  name: string,
  input: Record<string, unknown>,
  opts: MessageOptions & { id?: string; chunks?: number; /** a text block before the tool call */ text?: string } = {},
): ScriptedResponse {
  const { id, chunks, text, ...message } = opts;
  const steps: ScriptStep[] = text === undefined ? [] : [{ kind: 'text', text }];
  steps.push({ kind: 'tool_use', name, input, ...(id === undefined ? {} : { id }), ...(chunks === undefined ? {} : { chunks }) });
  return { kind: 'message', steps, ...message };
}

export function errorResponse(status: ErrorStatus, message?: string): ScriptedResponse {
  return { kind: 'error', status, ...(message === undefined ? {} : { message }) };
}

/** How many tool results a request carries: the step a scripted brain is at. */
export function toolResultCount(req: RecordedRequest): number {
  let n = 0;
  for (const m of req.body?.messages ?? []) {
    const content = (m as { content?: unknown }).content;
    if (Array.isArray(content)) n += content.filter((b) => (b as { type?: string }).type === 'tool_result').length;
  }
  return n;
}

/** Deterministic reply for unscripted traffic: "echo: <last user message text>". */
export function echoFallback(req: RecordedRequest): ScriptedResponse {
  return textResponse(`echo: ${lastUserText(req.body)}`);
}

function lastUserText(body: RecordedBody | null): string {
  const messages = body?.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (isRecord(m) && m.role === 'user') return textOf(m.content);
  }
  return '';
}

/** Text of a content value: a string, or text blocks (including those nested in tool_result). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => {
      if (!isRecord(block)) return '';
      if (block.type === 'text' && typeof block.text === 'string') return block.text;
      if (block.type === 'tool_result') return textOf(block.content);
      return '';
    })
    .filter((s) => s !== '')
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// Wire shapes

type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

interface PlannedBlock {
  block: ContentBlock;
  /** The delta pieces the block is streamed as. */
  pieces: string[];
}

interface Frame {
  event: string;
  data: unknown;
}

// Keyed by number: statuses can also arrive untyped over the control route.
const ERROR_TYPES: Record<number, string | undefined> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const ERROR_MESSAGES: Record<number, string | undefined> = {
  400: 'Invalid request',
  401: 'invalid x-api-key',
  429: 'Rate limited',
  500: 'Internal server error',
  529: 'Overloaded',
};

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Ids shaped like the real ones (`msg_01…`, `toolu_01…`, `req_01…`). */
function fakeId(prefix: string): string {
  const bytes = randomBytes(22);
  let out = '';
  for (const b of bytes) out += BASE62[b % 62] ?? '0';
  return `${prefix}_01${out}`;
}

function estimateTokens(s: string): number {
  return Math.max(1, Math.ceil(s.length / 4));
}

/** Split into n near-equal pieces by code point, so surrogate pairs are never cut in half. */
function splitInto(s: string, n: number | undefined): string[] {
  const chars = Array.from(s);
  if (chars.length === 0) return [];
  // Default: roughly token-sized pieces, so even short text arrives incrementally.
  const count = Math.min(chars.length, Math.max(1, Math.floor(n ?? Math.ceil(chars.length / 8))));
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    const start = Math.floor((i * chars.length) / count);
    const end = Math.floor(((i + 1) * chars.length) / count);
    pieces.push(chars.slice(start, end).join(''));
  }
  return pieces;
}

function planBlocks(steps: ScriptStep[]): PlannedBlock[] {
  return steps.map((step): PlannedBlock => {
    switch (step.kind) {
      case 'text':
        return { block: { type: 'text', text: step.text }, pieces: splitInto(step.text, step.chunks) };
      case 'thinking': {
        const signature = step.signature ?? randomBytes(48).toString('base64');
        return { block: { type: 'thinking', thinking: step.thinking, signature }, pieces: splitInto(step.thinking, step.chunks) };
      }
      case 'tool_use':
        return {
          block: { type: 'tool_use', id: step.id ?? fakeId('toolu'), name: step.name, input: step.input },
          pieces: splitInto(JSON.stringify(step.input), step.chunks),
        };
    }
  });
}

function blockFrames({ block, pieces }: PlannedBlock, index: number): Frame[] {
  const delta = (d: Record<string, unknown>): Frame => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index, delta: d },
  });
  const frames: Frame[] = [];
  switch (block.type) {
    case 'text':
      frames.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
      for (const text of pieces) frames.push(delta({ type: 'text_delta', text }));
      break;
    case 'thinking':
      frames.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
      });
      for (const thinking of pieces) frames.push(delta({ type: 'thinking_delta', thinking }));
      frames.push(delta({ type: 'signature_delta', signature: block.signature }));
      break;
    case 'tool_use':
      frames.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } },
      });
      for (const partial_json of pieces) frames.push(delta({ type: 'input_json_delta', partial_json }));
      break;
  }
  frames.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  return frames;
}

function blockTokens(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
      return estimateTokens(block.text);
    case 'thinking':
      return estimateTokens(block.thinking);
    case 'tool_use':
      return estimateTokens(block.name + JSON.stringify(block.input));
  }
}

function inputTokensOf(body: RecordedBody | null): number {
  return estimateTokens(JSON.stringify([body?.system ?? null, body?.messages ?? [], body?.tools ?? []]));
}

function usageOf(
  resp: { usage?: ScriptedUsage; omitCacheUsage?: boolean },
  inputTokens: number,
  outputTokens: number,
): Record<string, number | null> {
  const u = resp.usage;
  const usage: Record<string, number | null> = {
    input_tokens: u?.input_tokens ?? inputTokens,
    output_tokens: u?.output_tokens ?? outputTokens,
  };
  if (!resp.omitCacheUsage) {
    // `in` rather than `??`: a scripted explicit null must reach the client as null.
    usage.cache_creation_input_tokens = u && 'cache_creation_input_tokens' in u ? (u.cache_creation_input_tokens ?? null) : 0;
    usage.cache_read_input_tokens = u && 'cache_read_input_tokens' in u ? (u.cache_read_input_tokens ?? null) : 0;
  }
  return usage;
}

function errorBody(type: string, message: string, requestId: string): string {
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const RESPONSE_KINDS = new Set(['message', 'error', 'drop', 'hang']);

/** Light shape check for responses arriving over the control route (the in-process API is typed). */
function parseScripted(value: unknown): ScriptedResponse[] {
  const list = Array.isArray(value) ? value : [value];
  for (const item of list) {
    if (!isRecord(item) || typeof item.kind !== 'string' || !RESPONSE_KINDS.has(item.kind)) {
      throw new Error(`not a ScriptedResponse: ${JSON.stringify(item)}`);
    }
    if (item.kind === 'message' && !Array.isArray(item.steps)) throw new Error('message needs steps[]');
    if (item.kind === 'error' && typeof item.status !== 'number') throw new Error('error needs a status');
  }
  return list as ScriptedResponse[];
}

// ---------------------------------------------------------------------------------------------
// Server

function defaultFallback(req: RecordedRequest): ScriptedResponse {
  return {
    kind: 'error',
    status: 500,
    message: `fake-messages-api: no scripted response for ${req.method} ${req.path} (queue empty; enqueue() one or setFallback())`,
  };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function normalizeHeaders(raw: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function authOf(headers: Record<string, string>): Pick<RecordedRequest, 'auth' | 'apiKey'> {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '');
  if (bearer?.[1]) return { auth: 'bearer', apiKey: bearer[1].trim() };
  const key = headers['x-api-key'];
  if (key) return { auth: 'x-api-key', apiKey: key };
  return { auth: null, apiKey: null };
}

export async function startFakeMessagesApi(opts: FakeMessagesApiOptions = {}): Promise<FakeMessagesApi> {
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  const cache = opts.promptCache ? new PromptCache() : null;
  let fallback: Fallback = opts.fallback ?? defaultFallback;
  // Aborted on close() so delays in flight end at once instead of keeping the process alive.
  const shutdown = new AbortController();

  const pause = async (ms: number | undefined): Promise<void> => {
    if (!ms || ms <= 0) return;
    await sleep(ms, undefined, { signal: shutdown.signal }).catch(() => undefined);
  };

  const sendJson = (res: http.ServerResponse, status: number, body: string, requestId: string): void => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'request-id': requestId,
    });
    res.end(body);
  };

  const sendError = (res: http.ServerResponse, status: number, type: string, message: string, requestId: string): void => {
    sendJson(res, status, errorBody(type, message, requestId), requestId);
  };

  async function respondMessages(
    res: http.ServerResponse,
    closed: Promise<false>,
    record: RecordedRequest,
    scripted: ScriptedResponse,
    requestId: string,
  ): Promise<void> {
    const body = record.body;
    const streaming = body?.stream === true;
    const model = typeof body?.model === 'string' ? body.model : 'claude-fake';
    const inputTokens = inputTokensOf(body);
    let gone = false;
    void closed.then(() => (gone = true));

    const write = async (frame: Frame): Promise<boolean> => {
      if (gone) return false;
      const written = new Promise<boolean>((resolve) => {
        res.write(`event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`, (err) => resolve(!err));
      });
      return Promise.race([written, closed]);
    };

    const startStream = async (usage: Record<string, number | null>): Promise<boolean> => {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'request-id': requestId,
      });
      const message = {
        id: fakeId('msg'),
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      };
      return (await write({ event: 'message_start', data: { type: 'message_start', message } })) && write({ event: 'ping', data: { type: 'ping' } });
    };

    // Streams frames, pausing between them; false once the client or server went away.
    const writeAll = async (frames: Frame[], chunkDelayMs: number | undefined): Promise<boolean> => {
      for (const frame of frames) {
        await pause(chunkDelayMs);
        if (!(await write(frame))) return false;
      }
      return true;
    };

    switch (scripted.kind) {
      case 'error': {
        const type = scripted.errorType ?? ERROR_TYPES[scripted.status] ?? 'api_error';
        const message = scripted.message ?? ERROR_MESSAGES[scripted.status] ?? 'Error';
        if (streaming && scripted.midStream) {
          if (!(await startStream(usageOf({}, inputTokens, 0)))) return;
          await write({ event: 'error', data: { type: 'error', error: { type, message }, request_id: requestId } });
          res.end();
          return;
        }
        sendError(res, scripted.status, type, message, requestId);
        return;
      }
      case 'hang':
        // Leave the response open: the client aborts, or close() destroys the socket.
        if (streaming) await startStream(usageOf({}, inputTokens, 1));
        return;
      case 'drop': {
        if (streaming) {
          const afterSteps = scripted.afterSteps ?? 0;
          const steps =
            scripted.steps ?? Array.from({ length: afterSteps }, (_, i): ScriptStep => ({ kind: 'text', text: `partial ${i + 1} ` }));
          const frames = planBlocks(steps.slice(0, afterSteps)).flatMap(blockFrames);
          if (!(await startStream(usageOf({}, inputTokens, 1))) || !(await writeAll(frames, undefined))) return;
        }
        // Destroying the socket mid chunked body is what a dropped connection looks like to fetch.
        res.socket?.destroy();
        return;
      }
      case 'message': {
        await pause(scripted.delayMs);
        if (gone) return;
        const planned = planBlocks(scripted.steps);
        const content = planned.map((p) => p.block);
        const stopReason = scripted.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
        const outputTokens = scripted.usage?.output_tokens ?? Math.max(1, content.reduce((n, b) => n + blockTokens(b), 0));
        const usage = cache && !scripted.usage && !scripted.omitCacheUsage ? { ...cache.account(body), output_tokens: outputTokens } : usageOf(scripted, inputTokens, outputTokens);

        if (!streaming) {
          const message = {
            id: fakeId('msg'),
            type: 'message',
            role: 'assistant',
            model,
            content,
            stop_reason: stopReason,
            stop_sequence: null,
            usage,
          };
          sendJson(res, 200, JSON.stringify(message), requestId);
          return;
        }

        if (!(await startStream(usage))) return;
        if (scripted.endAfter) {
          if (!(await writeAll(planned.flatMap(blockFrames), scripted.chunkDelayMs))) return;
          await scripted.endAfter;
        }
        const frames: Frame[] = [
          ...(scripted.endAfter ? [] : planned.flatMap(blockFrames)),
          {
            event: 'message_delta',
            data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } },
          },
          { event: 'message_stop', data: { type: 'message_stop' } },
        ];
        if (await writeAll(frames, scripted.chunkDelayMs)) res.end();
        return;
      }
    }
  }

  function handleControl(req: http.IncomingMessage, res: http.ServerResponse, path: string, raw: string): void {
    const requestId = fakeId('req');
    if (req.method === 'POST' && path === '/_control/enqueue') {
      let added: ScriptedResponse[];
      try {
        added = parseScripted(JSON.parse(raw));
      } catch (e) {
        sendError(res, 400, 'invalid_request_error', e instanceof Error ? e.message : String(e), requestId);
        return;
      }
      queue.push(...added);
      sendJson(res, 200, JSON.stringify({ queued: added.length, pending: queue.length }), requestId);
      return;
    }
    if (req.method === 'POST' && path === '/_control/reset') {
      api.reset();
      sendJson(res, 200, JSON.stringify({ ok: true }), requestId);
      return;
    }
    if (req.method === 'GET' && path === '/_control/requests') {
      sendJson(res, 200, JSON.stringify(requests), requestId);
      return;
    }
    sendError(res, 404, 'not_found_error', `no control route ${req.method} ${path}`, requestId);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const closed = new Promise<false>((resolve) => res.once('close', () => resolve(false)));
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const raw = await readBody(req);

    if (opts.control && path.startsWith('/_control/')) {
      handleControl(req, res, path, raw);
      return;
    }

    const requestId = fakeId('req');
    const headers = normalizeHeaders(req.headers);
    let body: RecordedBody | null = null;
    let parseError: string | null = null;
    if (raw.trim() !== '') {
      try {
        const parsed: unknown = JSON.parse(raw);
        body = isRecord(parsed) ? parsed : null;
        if (!body) parseError = 'request body must be a JSON object';
      } catch {
        parseError = 'request body is not valid JSON';
      }
    }
    const record: RecordedRequest = { method: req.method ?? 'GET', path, headers, body, ...authOf(headers), receivedAt: Date.now() };
    requests.push(record);

    if (opts.requireKey !== undefined && record.apiKey !== opts.requireKey) {
      sendError(res, 401, 'authentication_error', 'invalid x-api-key', requestId);
      return;
    }
    if (req.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/messages/count_tokens')) {
      sendError(res, 404, 'not_found_error', `Not found: ${req.method} ${path}`, requestId);
      return;
    }
    if (parseError !== null) {
      sendError(res, 400, 'invalid_request_error', parseError, requestId);
      return;
    }
    if (path === '/v1/messages/count_tokens') {
      sendJson(res, 200, JSON.stringify({ input_tokens: inputTokensOf(body) }), requestId);
      return;
    }
    const system = systemTextOf(body);
    const at = queue.findIndex((r) => r.forSystem === undefined || system.includes(r.forSystem));
    const scripted = at >= 0 ? queue.splice(at, 1)[0]! : fallback(record);
    await respondMessages(res, closed, record, scripted, requestId);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug in the fake must fail the request visibly rather than hang the test.
      const message = `fake-messages-api internal error: ${err instanceof Error ? err.message : String(err)}`;
      if (!res.headersSent) sendError(res, 500, 'api_error', message, fakeId('req'));
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  const api: FakeMessagesApi = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    enqueue: (...responses) => {
      queue.push(...responses);
    },
    setFallback: (fn) => {
      fallback = fn ?? defaultFallback;
    },
    pending: () => queue.length,
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      cache?.clear();
    },
    close: async () => {
      shutdown.abort();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      // Hanging streams and keep-alive sockets would otherwise hold server.close() open forever.
      server.closeAllConnections();
      await done;
    },
  };
  return api;
}
