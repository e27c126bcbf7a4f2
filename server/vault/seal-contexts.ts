import 'server-only';
import type { SecretField } from '~/lib/vault';

/**
 * What each sealed value is bound to (the AES-GCM associated data): a ciphertext copied to another
 * row or field does not open. The vault's credentials and the git proxy's repository tokens are
 * sealed under one master key, and its rotation re-wraps both, so both contexts live here.
 */
export function sealContext(credentialId: string, field: SecretField): string {
  return `${credentialId}:${field}`;
}

export const webhookKeyContext = (endpointId: string) => `webhook_signing_key:${endpointId}`;

export const repositoryTokenContext = (sessionId: string, resourceId: string) => `repository_token:${sessionId}:${resourceId}`;
