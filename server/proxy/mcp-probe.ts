import 'server-only';
import { InvalidInputError } from '~/lib/errors';
import { isMcpUpstreamError } from '~/server/proxy/mcp-gateway';
import { McpUpstream } from '~/server/proxy/mcp-proxy';
import { scrubSecrets } from '~/server/proxy/scrub-secrets';
import type { McpSecret, McpSecretSource } from '~/server/vault/mcp-secret';
import { logger } from '~/server/log';

const log = logger('mcp-probe');

/** What "Test connection" answers: the tool names, or why not (never a credential). */
export type McpProbeResult = { status: 'ok'; tools: string[] } | { status: 'unauthorized' | 'unreachable' | 'error'; message: string };

export const PROBE_TIMEOUT_MS = 10_000;

/**
 * A one-off `tools/list` against an MCP server URL, with the credential the given vaults hold for
 * that exact URL (the first vault that has one), through the proxy's upstream code: the same
 * timeouts, OAuth refresh and scrubbing. Nothing is stored but a refreshed OAuth token.
 */
export async function probeMcpServer(secrets: McpSecretSource, url: string, vaultIds: readonly string[], o: { timeoutMs?: number } = {}): Promise<McpProbeResult> {
  const u = parseUrl(url);
  const timeoutMs = Math.min(o.timeoutMs ?? PROBE_TIMEOUT_MS, PROBE_TIMEOUT_MS);
  const secret = await secrets.mcpSecret(vaultIds, url);
  // Each phase gets the whole budget, and the signal bounds them together.
  const upstream = new McpUpstream({ secrets, connectTimeoutMs: timeoutMs, callTimeoutMs: timeoutMs, refreshTimeoutMs: Math.min(5_000, timeoutMs) });
  const signal = AbortSignal.timeout(timeoutMs);
  const name = u.host;
  try {
    const tools = await upstream.listTools({ server: { type: 'url', name, url }, secret }, signal);
    return { status: 'ok', tools: tools.map((t) => t.name) };
  } catch (e) {
    if (signal.aborted) return { status: 'unreachable', message: `${name} did not answer within ${Math.round(timeoutMs / 1000)} s` };
    if (!isMcpUpstreamError(e)) throw e;
    log.info('mcp probe failed', { host: name, kind: e.kind, credential: secret !== null });
    switch (e.kind) {
      case 'authentication':
        return { status: 'unauthorized', message: scrub(secret ? `${name} refused the credential your vaults hold for this URL` : `${name} asks for a credential and no vault holds one for this URL`, secret) };
      case 'connection':
        return { status: 'unreachable', message: scrub(e.message, secret) };
      case 'protocol':
        return { status: 'error', message: scrub(e.message, secret) };
    }
  }
}

function parseUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InvalidInputError('url: must be an http or https URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InvalidInputError('url: must be an http or https URL');
  if (u.username !== '' || u.password !== '') throw new InvalidInputError('url: must not carry credentials (add one to a vault instead)');
  return u;
}

/** The upstream code scrubs already; this is the last line before an answer leaves. */
function scrub(text: string, s: McpSecret | null): string {
  const values = !s ? [] : s.type === 'static_bearer' ? [s.token] : [s.accessToken, ...(s.refresh ? [s.refresh.refreshToken] : [])];
  return scrubSecrets(text, values);
}
