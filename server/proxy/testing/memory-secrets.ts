import type { McpSecret, McpSecretSource } from '~/server/vault/mcp-secret';

/** An McpSecretSource in memory, for tests: vaults of secrets keyed by server URL, and what was saved. */
export class MemorySecrets implements McpSecretSource {
  readonly vaults = new Map<string, Map<string, McpSecret>>();
  readonly saved: Array<{ credentialId: string; accessToken: string; expiresAt: string | null; refreshToken?: string }> = [];

  put(vaultId: string, serverUrl: string, secret: McpSecret): void {
    if (!this.vaults.has(vaultId)) this.vaults.set(vaultId, new Map());
    this.vaults.get(vaultId)!.set(serverUrl, secret);
  }

  mcpSecret(vaultIds: readonly string[], serverUrl: string): Promise<McpSecret | null> {
    for (const v of vaultIds) {
      const s = this.vaults.get(v)?.get(serverUrl);
      if (s) return Promise.resolve(structuredClone(s));
    }
    return Promise.resolve(null);
  }

  mcpSecretById(credentialId: string): Promise<McpSecret | null> {
    for (const vault of this.vaults.values()) {
      for (const s of vault.values()) if (s.credentialId === credentialId) return Promise.resolve(structuredClone(s));
    }
    return Promise.resolve(null);
  }

  saveRefreshedToken(credentialId: string, next: { accessToken: string; expiresAt: string | null; refreshToken?: string }): Promise<void> {
    this.saved.push({ credentialId, ...next });
    for (const vault of this.vaults.values()) {
      for (const [url, s] of vault) {
        if (s.credentialId !== credentialId || s.type !== 'mcp_oauth') continue;
        vault.set(url, { ...s, accessToken: next.accessToken, expiresAt: next.expiresAt, refresh: s.refresh && next.refreshToken ? { ...s.refresh, refreshToken: next.refreshToken } : s.refresh });
      }
    }
    return Promise.resolve();
  }
}
