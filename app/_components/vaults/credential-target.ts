import type { CredentialAuth } from '~/lib/vault';

/** What a credential is for, as a line: the MCP server's URL, or the env var's name and hosts. */
export function credentialTarget(auth: CredentialAuth): string {
  if (auth.type !== 'environment_variable') return auth.mcp_server_url;
  const hosts = auth.networking.type === 'limited' ? auth.networking.allowed_hosts.join(', ') || 'no hosts' : 'any host';
  return `$${auth.secret_name} → ${hosts}`;
}
