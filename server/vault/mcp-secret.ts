import 'server-only';

/**
 * The contract between the vault (which stores credentials encrypted) and the MCP proxy (the only
 * code that may see one decrypted). Nothing here is a secret; an implementation of
 * `McpSecretSource` decrypts, and only `server/proxy` may import it (lint rule).
 */

export type TokenEndpointAuth = { type: 'none' } | { type: 'client_secret_basic'; clientSecret: string } | { type: 'client_secret_post'; clientSecret: string };

export interface OAuthRefresh {
  clientId: string;
  refreshToken: string;
  tokenEndpoint: string;
  tokenEndpointAuth: TokenEndpointAuth;
  resource: string | null;
  scope: string | null;
}

/** One decrypted MCP credential, as the proxy needs it to call upstream. */
export type McpSecret =
  | { credentialId: string; vaultId: string; type: 'static_bearer'; token: string }
  | { credentialId: string; vaultId: string; type: 'mcp_oauth'; accessToken: string; expiresAt: string | null; refresh: OAuthRefresh | null };

export interface McpSecretSource {
  /**
   * The credential for an MCP server URL among a session's vaults: the first vault (in the
   * session's `vault_ids` order) holding a live (not archived) `static_bearer` or `mcp_oauth`
   * credential whose `mcp_server_url` equals `serverUrl`; null when none does.
   */
  mcpSecret(vaultIds: readonly string[], serverUrl: string): Promise<McpSecret | null>;
  /** One credential by id (live or archived), when it is an MCP credential: what validating it probes with. */
  mcpSecretById(credentialId: string): Promise<McpSecret | null>;
  /** Stores a refreshed OAuth access token (and a rotated refresh token, when the server sent one), encrypted. */
  saveRefreshedToken(credentialId: string, next: { accessToken: string; expiresAt: string | null; refreshToken?: string }): Promise<void>;
}
