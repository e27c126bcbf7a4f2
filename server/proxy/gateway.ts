import 'server-only';
import type { Kysely } from 'kysely';
import type { McpGateway } from '~/server/proxy/mcp-gateway';
import { McpProxy, type McpProxyOptions } from '~/server/proxy/mcp-proxy';
import { type SigningKey, mintSessionToken, proxySigningKey } from '~/server/proxy/session-token';
import type { Database } from '~/server/session/schema';
import type { SessionStore } from '~/server/session/store';
import type { McpSecretSource } from '~/server/vault/mcp-secret';

/**
 * The harness's way to the proxy: each request carries a fresh token for its session only, so the
 * harness never holds a credential (nor a token that outlives the call by more than a minute).
 */
export function createMcpGateway(proxy: McpProxy, signingKey: SigningKey): McpGateway {
  const token = async (sessionId: string) => mintSessionToken(await signingKey(), sessionId);
  return {
    listTools: async (sessionId, server, signal) => proxy.listTools(await token(sessionId), server, signal),
    callTool: async (sessionId, server, tool, input, signal) => proxy.callTool(await token(sessionId), server, tool, input, signal),
  };
}

/** The gateway a runtime gives its harness: the proxy over this database's sessions and signing key. */
export function mcpGatewayFor(db: Kysely<Database>, sessions: Pick<SessionStore, 'getSession'>, secrets: McpSecretSource, onRefreshFailed?: McpProxyOptions['onRefreshFailed']): McpGateway {
  const signingKey = proxySigningKey(db);
  return createMcpGateway(new McpProxy({ secrets, sessions, signingKey, ...(onRefreshFailed ? { onRefreshFailed } : {}) }), signingKey);
}
