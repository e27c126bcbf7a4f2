import 'server-only';
import type { McpGateway } from '~/server/proxy/mcp-gateway';
import type { McpProxy } from '~/server/proxy/mcp-proxy';
import { type SigningKey, mintSessionToken } from '~/server/proxy/session-token';

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
