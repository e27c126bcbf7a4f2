import 'server-only';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import type { McpServer } from '~/lib/agent';
import type { ToolResultContent } from '~/lib/events';
import type { McpListedTool } from '~/lib/mcp-tools';
import { type McpCallResult, type McpFailureKind, McpUpstreamError, isMcpUpstreamError } from '~/server/proxy/mcp-gateway';
import { type SigningKey, verifySessionToken } from '~/server/proxy/session-token';
import type { McpSecret, McpSecretSource, OAuthRefresh } from '~/server/vault/mcp-secret';
import type { SessionStore } from '~/server/session/store';
import { logger } from '~/server/log';
import { type OutboundPolicy, isOutboundRefused, outboundFetch } from '~/server/net/outbound';
import { scrubSecrets } from '~/server/proxy/scrub-secrets';

const log = logger('mcp-proxy');

/** What calling upstream needs: the vault's decrypting side and the timeouts. */
export interface McpUpstreamOptions {
  secrets: McpSecretSource;
  /** Connecting (initialize) and one request (list or call): default 10 s and 60 s. */
  connectTimeoutMs?: number;
  callTimeoutMs?: number;
  /** The OAuth token endpoint's answer: default 10 s. */
  refreshTimeoutMs?: number;
  /** Where MCP servers and token endpoints may be reached: default the server's (`PADDOCK_OUTBOUND_ALLOW`). */
  outbound?: OutboundPolicy;
  /** Told (ids only) when a credential's OAuth refresh fails: refused, or its token endpoint unreachable. */
  onRefreshFailed?: (credential: { credentialId: string; vaultId: string }) => void;
}

export interface McpProxyOptions extends McpUpstreamOptions {
  sessions: Pick<SessionStore, 'getSession'>;
  signingKey: SigningKey;
}

/** A server and the credential to call it with. */
export interface McpTarget {
  server: McpServer;
  secret: McpSecret | null;
}

/**
 * The MCP proxy: the one place (with the vault) that sees a decrypted credential. A caller shows a
 * session token; the proxy reads that session's agent and vaults, finds the server by name among
 * that agent's `mcp_servers` (never another session's), and calls it with the credential the vault
 * holds for its URL. An expired OAuth token, or a 401 where a refresh is configured, is refreshed
 * once and saved. What leaves here (results, errors, log lines) never holds a credential.
 */
export class McpProxy {
  private readonly upstream: McpUpstream;
  constructor(private readonly o: McpProxyOptions) {
    this.upstream = new McpUpstream(o);
  }

  async listTools(token: string, serverName: string, signal?: AbortSignal): Promise<McpListedTool[]> {
    return this.upstream.listTools(await this.resolve(token, serverName), signal);
  }

  async callTool(token: string, serverName: string, toolName: string, input: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    return this.upstream.callTool(await this.resolve(token, serverName), toolName, input, signal);
  }

  /** The verified session's server of that name and its credential. */
  private async resolve(token: string, serverName: string): Promise<McpTarget> {
    const sessionId = await verifySessionToken(await this.o.signingKey(), token);
    const session = await this.o.sessions.getSession(sessionId);
    const server = session?.agent?.mcp_servers.find((s) => s.name === serverName);
    if (!session || !server) throw new McpUpstreamError('protocol', serverName, `MCP server "${serverName}" is not one of this session's servers`);
    const secret = await this.o.secrets.mcpSecret(session.vault_ids, server.url);
    return { server, secret };
  }
}

/**
 * Upstream calls for a server and credential already chosen: the proxy's (after the session token
 * says which) and the agents page's one-off "Test connection" (`mcp-probe.ts`).
 */
export class McpUpstream {
  constructor(private readonly o: McpUpstreamOptions) {}

  async listTools(target: McpTarget, signal?: AbortSignal): Promise<McpListedTool[]> {
    return this.withUpstream(target, signal, async (client, opts, secrets) => {
      const tools: McpListedTool[] = [];
      let cursor: string | undefined;
      // Paged: a server with many tools answers in pages (bounded, so a server cannot loop us).
      for (let page = 0; page < 20; page++) {
        const res = await client.listTools(cursor ? { cursor } : {}, opts);
        // Only what can be offered to the model, bounded: the listing is stored in the log.
        for (const t of res.tools) {
          if (!TOOL_NAME.test(t.name) || tools.length >= MAX_TOOLS || JSON.stringify(t.inputSchema).length > MAX_SCHEMA_CHARS) continue;
          tools.push({ name: t.name, description: scrub((t.description ?? t.title ?? '').slice(0, 10_000), secrets), input_schema: scrubSchema(t.inputSchema, secrets) });
        }
        cursor = res.nextCursor;
        if (!cursor) break;
      }
      return tools;
    });
  }

  async callTool(target: McpTarget, toolName: string, input: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    return this.withUpstream(target, signal, async (client, opts, secrets) => {
      const res = await client.callTool({ name: toolName, arguments: input }, undefined, opts);
      // An upstream that echoes the header it got must not put the credential into the log.
      const content = toResultContent(res.content).map((c) => (c.type === 'text' ? { ...c, text: scrub(c.text, secrets) } : c));
      return { content, isError: res.isError === true };
    });
  }

  private async withUpstream<T>(
    target: McpTarget,
    signal: AbortSignal | undefined,
    fn: (client: Client, opts: { timeout: number; signal?: AbortSignal }, secrets: ReadonlySet<string>) => Promise<T>,
  ): Promise<T> {
    const { server } = target;
    let secret = target.secret;
    // Every credential value seen here, to scrub from whatever goes out.
    const secrets = new Set<string>();
    const note = (s: McpSecret | null) => {
      if (s?.type === 'static_bearer') secrets.add(s.token);
      if (s?.type === 'mcp_oauth') {
        secrets.add(s.accessToken);
        if (s.refresh) secrets.add(s.refresh.refreshToken);
      }
    };
    note(secret);
    let refreshed = false;
    const refresh = async (s: Extract<McpSecret, { type: 'mcp_oauth' }>, refreshConfig: OAuthRefresh) => {
      refreshed = true;
      const next = await this.refresh(server.name, s, refreshConfig, secrets).catch((e: unknown) => {
        this.o.onRefreshFailed?.({ credentialId: s.credentialId, vaultId: s.vaultId });
        throw e;
      });
      secret = next;
      note(next);
    };
    try {
      if (secret?.type === 'mcp_oauth' && secret.refresh && secret.expiresAt !== null && Date.parse(secret.expiresAt) <= Date.now()) await refresh(secret, secret.refresh);
      try {
        return await this.once(server, bearerOf(secret), signal, fn, secrets);
      } catch (e) {
        // A 401 with a refresh configured: refreshed once, and the call tried once more.
        if (!(isMcpUpstreamError(e) && e.kind === 'authentication' && !refreshed && secret?.type === 'mcp_oauth' && secret.refresh)) throw e;
        await refresh(secret, secret.refresh);
        return await this.once(server, bearerOf(secret), signal, fn, secrets);
      }
    } catch (e) {
      if (isMcpUpstreamError(e)) {
        log.warn('mcp upstream failed', { server: server.name, kind: e.kind });
        throw e;
      }
      throw new McpUpstreamError('protocol', server.name, scrub(`MCP server "${server.name}" failed: ${e instanceof Error ? e.message : String(e)}`, secrets));
    }
  }

  /** One connection: connect, run, close (always: no connection or timer is left behind). */
  private async once<T>(
    server: McpServer,
    bearer: string | null,
    signal: AbortSignal | undefined,
    fn: (client: Client, opts: { timeout: number; signal?: AbortSignal }, secrets: ReadonlySet<string>) => Promise<T>,
    secrets: ReadonlySet<string>,
  ): Promise<T> {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: bearer ? { Authorization: `Bearer ${bearer}` } : {}, redirect: 'error' },
      // Every request (the SDK's POST, GET and DELETE) checked and pinned by the address policy.
      fetch: outboundFetch(this.o.outbound),
    });
    const client = new Client({ name: 'paddock-mcp-proxy', version: '0.1.0' });
    try {
      try {
        await client.connect(transport, { timeout: this.o.connectTimeoutMs ?? 10_000, ...(signal ? { signal } : {}) });
      } catch (e) {
        throw classify(server.name, e, 'connect', secrets);
      }
      try {
        return await fn(client, { timeout: this.o.callTimeoutMs ?? 60_000, ...(signal ? { signal } : {}) }, secrets);
      } catch (e) {
        throw classify(server.name, e, 'call', secrets);
      }
    } finally {
      // Tell the server its session is over (it may keep state per session), briefly: a server
      // that does not answer must not hold the call up.
      if (transport.sessionId) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([transport.terminateSession().catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, 1_000)))]);
        clearTimeout(timer);
      }
      await client.close().catch(() => undefined);
    }
  }

  /** Swaps the refresh token for a new access token at the token endpoint, and saves it. */
  private async refresh(serverName: string, s: Extract<McpSecret, { type: 'mcp_oauth' }>, r: OAuthRefresh, secrets: Set<string>): Promise<McpSecret> {
    const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: r.refreshToken });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    switch (r.tokenEndpointAuth.type) {
      case 'none':
        body.set('client_id', r.clientId);
        break;
      case 'client_secret_post':
        secrets.add(r.tokenEndpointAuth.clientSecret);
        body.set('client_id', r.clientId);
        body.set('client_secret', r.tokenEndpointAuth.clientSecret);
        break;
      case 'client_secret_basic':
        secrets.add(r.tokenEndpointAuth.clientSecret);
        // RFC 6749 § 2.3.1: both parts form-encoded before base64.
        headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(r.clientId)}:${encodeURIComponent(r.tokenEndpointAuth.clientSecret)}`).toString('base64')}`;
        break;
    }
    if (r.resource) body.set('resource', r.resource);
    if (r.scope) body.set('scope', r.scope);
    let res: Response;
    try {
      res = await outboundFetch(this.o.outbound)(r.tokenEndpoint, { method: 'POST', headers, body, redirect: 'error', signal: AbortSignal.timeout(this.o.refreshTimeoutMs ?? 10_000) });
    } catch (e) {
      if (isOutboundRefused(e)) throw new McpUpstreamError('connection', serverName, `MCP server "${serverName}": its OAuth token endpoint ${e.message}`, { stage: 'refresh' });
      throw new McpUpstreamError('connection', serverName, `MCP server "${serverName}": its OAuth token endpoint could not be reached to refresh the access token`, { stage: 'refresh' });
    }
    const text = await res.text().catch(() => '');
    const parsed = TokenResponse.safeParse(parseJson(text));
    if (!res.ok || !parsed.success) {
      const body = scrub(text, secrets);
      throw new McpUpstreamError('authentication', serverName, `MCP server "${serverName}": refreshing the OAuth access token failed (HTTP ${res.status}); reconnect the credential in its vault`, {
        stage: 'refresh',
        httpResponse: { status_code: res.status, content_type: res.headers.get('content-type') ?? '', body: body.slice(0, MAX_CAPTURED_BODY), body_truncated: body.length > MAX_CAPTURED_BODY },
      });
    }
    const t = parsed.data;
    secrets.add(t.access_token);
    if (t.refresh_token) secrets.add(t.refresh_token);
    const expiresAt = t.expires_in ? new Date(Date.now() + t.expires_in * 1000).toISOString() : null;
    await this.o.secrets.saveRefreshedToken(s.credentialId, { accessToken: t.access_token, expiresAt, ...(t.refresh_token ? { refreshToken: t.refresh_token } : {}) });
    log.info('mcp oauth token refreshed', { server: serverName, credential: s.credentialId });
    return { ...s, accessToken: t.access_token, expiresAt, refresh: { ...r, refreshToken: t.refresh_token ?? r.refreshToken } };
  }
}

/** How much of a token endpoint's error answer a validation keeps. */
const MAX_CAPTURED_BODY = 2_000;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A name that can be part of a Messages API tool name (`mcp__<server>__<tool>`, ≤ 64 characters). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_TOOLS = 1000;
const MAX_SCHEMA_CHARS = 32_000;

const TokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.number().positive().optional(),
  refresh_token: z.string().min(1).optional(),
});

function bearerOf(s: McpSecret | null): string | null {
  if (!s) return null;
  return s.type === 'static_bearer' ? s.token : s.accessToken;
}

/** Replaces every credential value, in any common encoding, in a text (an upstream may echo what it was sent). */
function scrub(text: string, secrets: ReadonlySet<string>): string {
  return scrubSecrets(text, secrets);
}

/** A tool's input schema with any credential in it replaced (it is stored in the log with the listing). */
function scrubSchema<T>(schema: T, secrets: ReadonlySet<string>): T {
  const text = JSON.stringify(schema);
  const clean = scrub(text, secrets);
  if (clean === text) return schema;
  try {
    return JSON.parse(clean) as T;
  } catch {
    return { type: 'object' } as T;
  }
}

const TIMEOUT_CODE = -32001;

/**
 * An SDK failure as one of three kinds. Upstream text is kept only for protocol errors, and
 * scrubbed; an HTTP error's body never reaches the message (a server may echo the header).
 */
function classify(server: string, e: unknown, phase: 'connect' | 'call', secrets: ReadonlySet<string>): McpUpstreamError {
  if (isMcpUpstreamError(e)) return e;
  // Refused before any connection: the message names the host, nothing about what answers there.
  if (isOutboundRefused(e)) return new McpUpstreamError('connection', server, `MCP server "${server}": ${e.message}`, { stage: phase });
  const make = (kind: McpFailureKind, why: string) => new McpUpstreamError(kind, server, `MCP server "${server}" ${why}`, { stage: phase });
  if (e instanceof StreamableHTTPError) {
    if (e.code === 401 || e.code === 403) return make('authentication', `refused the credential (HTTP ${e.code}): check the credential for its URL in the session's vaults`);
    if (e.code === -1) return make('protocol', 'answered with an unexpected content type');
    return make(phase === 'connect' ? 'connection' : 'protocol', `answered HTTP ${e.code}`);
  }
  const code = typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
  if (code === TIMEOUT_CODE) return make('connection', phase === 'connect' ? 'did not answer in time while connecting' : 'did not answer the request in time');
  if (e instanceof TypeError || (e instanceof Error && /fetch failed|ECONNREFUSED|ENOTFOUND|ECONNRESET|socket/i.test(e.message))) return make('connection', 'could not be reached');
  if (e instanceof Error && e.name === 'AbortError') return make('connection', 'request was cut off');
  return make('protocol', `failed: ${scrub(e instanceof Error ? e.message : String(e), secrets).slice(0, 500)}`);
}

type McpContent = Awaited<ReturnType<Client['callTool']>>['content'];

/** MCP content as tool-result blocks the Messages API takes: text and images as they are, anything else as text. */
function toResultContent(content: McpContent): ToolResultContent[] {
  if (!Array.isArray(content)) return [];
  return content.map((c): ToolResultContent => {
    const block = c as { type: string; [k: string]: unknown };
    if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: block.text };
    if (block.type === 'image' && typeof block.data === 'string' && typeof block.mimeType === 'string') {
      return { type: 'image', source: { type: 'base64', media_type: block.mimeType, data: block.data } };
    }
    if (block.type === 'resource' && typeof block.resource === 'object' && block.resource !== null && 'text' in block.resource && typeof block.resource.text === 'string') {
      return { type: 'text', text: block.resource.text };
    }
    return { type: 'text', text: JSON.stringify(block) };
  });
}
