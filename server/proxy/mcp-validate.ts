import 'server-only';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import type { Credential } from '~/lib/vault';
import { type CapturedHttpResponse, type McpUpstreamError, isMcpUpstreamError } from '~/server/proxy/mcp-gateway';
import { McpUpstream } from '~/server/proxy/mcp-proxy';
import { PROBE_TIMEOUT_MS } from '~/server/proxy/mcp-probe';
import type { McpSecret, McpSecretSource } from '~/server/vault/mcp-secret';

/** `POST /v1/vaults/{vault}/credentials/{id}/mcp_oauth_validate` as the SDK declares its answer. */
export interface CredentialValidation {
  type: 'vault_credential_validation';
  credential_id: string;
  vault_id: string;
  status: 'valid' | 'invalid' | 'unknown';
  has_refresh_token: boolean;
  mcp_probe: { method: string; http_response: CapturedHttpResponse | null } | null;
  refresh: { status: 'succeeded' | 'failed' | 'connect_error' | 'no_refresh_token'; http_response: CapturedHttpResponse | null } | null;
  validated_at: string;
}

type OAuthSecret = Extract<McpSecret, { type: 'mcp_oauth' }>;

/** The MCP method a failure happened in (connecting is `initialize`; the probe's request is `tools/list`). */
const methodOf = (e: McpUpstreamError) => (e.detail?.stage === 'call' ? 'tools/list' : 'initialize');

/**
 * Probes an `mcp_oauth` credential against its MCP server, as the API's validation does: the
 * stored access token first (no refresh), and on a refusal the refresh token, once (a new access
 * token is saved, sealed, and probed). `valid`: the server took a token; `invalid`: it refused
 * and a refresh did not recover; `unknown`: the server or the token endpoint could not be reached.
 * Nothing in the answer holds a credential (the upstream code scrubs what it captures).
 */
export async function validateMcpOAuth(secrets: McpSecretSource, credential: Credential, o: { timeoutMs?: number } = {}): Promise<CredentialValidation> {
  if (credential.auth.type !== 'mcp_oauth') throw new InvalidInputError(`credential ${credential.id} is ${credential.auth.type}: only mcp_oauth credentials are validated`);
  const secret = await secrets.mcpSecretById(credential.id);
  if (secret?.type !== 'mcp_oauth') throw new NotFoundError('credential', credential.id);
  const timeoutMs = Math.min(o.timeoutMs ?? PROBE_TIMEOUT_MS, PROBE_TIMEOUT_MS);
  // Whether the upstream code did refresh (it saves what it got): a second probe may pass without one.
  let refreshed = false;
  const watched: McpSecretSource = {
    mcpSecret: (ids, u) => secrets.mcpSecret(ids, u),
    mcpSecretById: (id) => secrets.mcpSecretById(id),
    saveRefreshedToken: async (id, next) => {
      refreshed = true;
      await secrets.saveRefreshedToken(id, next);
    },
  };
  const upstream = new McpUpstream({ secrets: watched, connectTimeoutMs: timeoutMs, callTimeoutMs: timeoutMs, refreshTimeoutMs: Math.min(5_000, timeoutMs) });
  const url = credential.auth.mcp_server_url;
  const server = { type: 'url' as const, name: new URL(url).host, url };
  const answer = (status: CredentialValidation['status'], rest: Pick<CredentialValidation, 'mcp_probe' | 'refresh'>): CredentialValidation => ({
    type: 'vault_credential_validation',
    credential_id: credential.id,
    vault_id: credential.vault_id,
    status,
    has_refresh_token: secret.refresh !== null,
    ...rest,
    validated_at: new Date().toISOString(),
  });
  const probe = (s: OAuthSecret) => upstream.listTools({ server, secret: s }, AbortSignal.timeout(timeoutMs * 3));

  // The stored access token as it is: no refresh.
  try {
    await probe({ ...secret, refresh: null });
    return answer('valid', { mcp_probe: null, refresh: null });
  } catch (e) {
    if (!isMcpUpstreamError(e)) throw e;
    const mcp_probe = { method: methodOf(e), http_response: null };
    if (e.kind !== 'authentication') return answer('unknown', { mcp_probe, refresh: null });
    if (!secret.refresh) return answer('invalid', { mcp_probe, refresh: { status: 'no_refresh_token', http_response: null } });
  }

  // Refused: the upstream code refreshes on the 401 (once), saves the new token, and probes with it.
  try {
    await probe(secret);
    return answer('valid', { mcp_probe: null, refresh: refreshed ? { status: 'succeeded', http_response: null } : null });
  } catch (e) {
    if (!isMcpUpstreamError(e)) throw e;
    if (e.detail?.stage === 'refresh') {
      return e.kind === 'connection'
        ? answer('unknown', { mcp_probe: null, refresh: { status: 'connect_error', http_response: null } })
        : answer('invalid', { mcp_probe: null, refresh: { status: 'failed', http_response: e.detail.httpResponse ?? null } });
    }
    const mcp_probe = { method: methodOf(e), http_response: null };
    return answer(e.kind === 'authentication' ? 'invalid' : 'unknown', { mcp_probe, refresh: { status: 'succeeded', http_response: null } });
  }
}
