/** A session's repository as the page shows it: never a token (the server does not send one). */
export interface ShownRepository {
  id: string;
  url: string;
  mount_path: string;
  checkout: { type: 'branch'; name: string } | { type: 'commit'; sha: string } | null;
}

/** `owner/repo` of a repository URL (the whole URL when it has no path). */
function shortName(url: string): string {
  try {
    const path = new URL(url).pathname.replace(/^\/+|\/+$/g, '').replace(/\.git$/i, '');
    return path || url;
  } catch {
    return url;
  }
}

/** One line under the session's title: which repositories its hands get, and where. */
export function SessionRepositories({ repositories }: { repositories: readonly ShownRepository[] }) {
  if (repositories.length === 0) return null;
  return (
    <div className="session-repos small" data-testid="session-repositories">
      <span className="muted">{repositories.length === 1 ? 'repository' : 'repositories'}:</span>
      {repositories.map((r) => (
        <span key={r.id} className="session-repo" title={r.url}>
          <span className="mono">{shortName(r.url)}</span>
          {r.checkout && <span className="muted"> @{r.checkout.type === 'branch' ? r.checkout.name : r.checkout.sha.slice(0, 7)}</span>}
          <span className="muted"> → </span>
          <span className="mono">{r.mount_path}</span>
        </span>
      ))}
    </div>
  );
}
