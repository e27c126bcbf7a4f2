'use client';
import { type RepositoryRow, newRepositoryRow } from '~/app/_components/new-session/repository-rows';

const MAX_REPOSITORIES = 20;

/** Repositories cloned into the session's hands: URL, an optional token (sealed, never shown back), branch and mount path. */
export function RepositoryFields({ rows, onChange }: { rows: RepositoryRow[]; onChange: (rows: RepositoryRow[]) => void }) {
  const set = (key: string, patch: Partial<RepositoryRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <div className="repo-fields">
      {rows.map((r, i) => (
        <div key={r.key} className="repo-row" data-testid="new-session-repo">
          <label className="repo-url">
            <span className="muted small">repository {i + 1}</span>
            <input className="mono" type="url" value={r.url} placeholder="https://github.com/owner/repo" maxLength={2048} data-testid="new-session-repo-url" onChange={(e) => set(r.key, { url: e.target.value })} />
          </label>
          <label>
            <span className="muted small">token (optional)</span>
            {/* Write-only: sealed on the server, never sent back; the browser is asked not to remember it. */}
            <input type="password" value={r.token} autoComplete="new-password" maxLength={4096} data-testid="new-session-repo-token" onChange={(e) => set(r.key, { token: e.target.value })} />
          </label>
          <label>
            <span className="muted small">branch (optional)</span>
            <input className="mono" value={r.branch} maxLength={255} placeholder="default branch" data-testid="new-session-repo-branch" onChange={(e) => set(r.key, { branch: e.target.value })} />
          </label>
          <label>
            <span className="muted small">mount path (optional)</span>
            <input className="mono" value={r.mountPath} maxLength={1024} placeholder="/workspace/<repo>" data-testid="new-session-repo-mount" onChange={(e) => set(r.key, { mountPath: e.target.value })} />
          </label>
          <button type="button" className="quiet" onClick={() => onChange(rows.filter((x) => x.key !== r.key))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" className="quiet" data-testid="new-session-add-repo" disabled={rows.length >= MAX_REPOSITORIES} onClick={() => onChange([...rows, newRepositoryRow(crypto.randomUUID())])}>
        + Add repository
      </button>
    </div>
  );
}
