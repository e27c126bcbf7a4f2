import type { ResourceParams } from '~/lib/agent';

/** One repository as the new-session form edits it (the token typed once, sent, never shown). */
export interface RepositoryRow {
  key: string;
  url: string;
  token: string;
  branch: string;
  mountPath: string;
}

export function newRepositoryRow(key: string): RepositoryRow {
  return { key, url: '', token: '', branch: '', mountPath: '' };
}

/** The session's `resources`: rows with a URL, blank optional fields left out (the server's defaults). */
export function repositoryResources(rows: readonly RepositoryRow[]): ResourceParams[] {
  return rows
    .filter((r) => r.url.trim() !== '')
    .map((r) => ({
      type: 'github_repository' as const,
      url: r.url.trim(),
      ...(r.token.trim() ? { authorization_token: r.token.trim() } : {}),
      ...(r.branch.trim() ? { checkout: { type: 'branch' as const, name: r.branch.trim() } } : {}),
      ...(r.mountPath.trim() ? { mount_path: r.mountPath.trim() } : {}),
    }));
}

const FIELD_WORDS: Record<string, string> = { url: 'URL', authorization_token: 'token', 'checkout.name': 'branch', checkout: 'branch', mount_path: 'mount path' };

/**
 * The server's refusal in the form's words: `invalid input: resources.0.url: must be…` becomes
 * `Repository 1 URL: must be…`, `vault_ids: vault … is archived` becomes `Vaults: vault … is archived`.
 */
export function plainCreateError(message: string): string {
  return message
    .replace(/^invalid input: /, '')
    .replace(/resources\.(\d+)\.([a-z_.]+)/g, (_m, i: string, field: string) => `Repository ${Number(i) + 1} ${FIELD_WORDS[field] ?? field.replace(/_/g, ' ')}`)
    .replace(/resources\.(\d+)/g, (_m, i: string) => `Repository ${Number(i) + 1}`)
    .replace(/\bvault_ids(\.\d+)?/g, 'Vaults')
    .replace(/^./, (c) => c.toUpperCase());
}
