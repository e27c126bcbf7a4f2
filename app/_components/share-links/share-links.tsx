'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { CopyButton } from '~/app/_components/copy-button/copy-button';
import { timeAgo } from '~/app/_components/time';
import { useTRPC } from '~/lib/browser/trpc';
import '~/app/_components/share-links/share-links.css';

const EXPIRY_CHOICES: readonly (readonly [string, number | null])[] = [
  ['never expires', null],
  ['1 hour', 1],
  ['1 day', 24],
  ['7 days', 24 * 7],
  ['30 days', 24 * 30],
];

/**
 * The owner's read-only links to this session: made here (the URL shown once: only its hash is
 * kept), listed with label, age, expiry and whether files are hidden, and revoked here.
 */
export function ShareLinks({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const links = useQuery({ ...trpc.shares.list.queryOptions({ sessionId }), enabled: open });
  const [label, setLabel] = useState('');
  const [hours, setHours] = useState<number | null>(null);
  const [hideFiles, setHideFiles] = useState(false);
  const [made, setMade] = useState<{ url: string; label: string } | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.shares.list.queryKey({ sessionId }) });
  const create = useMutation(
    trpc.shares.create.mutationOptions({
      onSuccess: (link) => {
        setMade({ url: new URL(link.path, window.location.origin).toString(), label: link.label });
        setLabel('');
        void refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.shares.revoke.mutationOptions({ onSuccess: () => void refresh() }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ sessionId, label, expiresInHours: hours, hideFiles });
  };

  return (
    <div className="share-links">
      <button
        type="button"
        className="small"
        data-testid="share-toggle"
        aria-expanded={open}
        onClick={() => {
          // Closing forgets a new link's URL: it is shown once.
          if (open) setMade(null);
          setOpen(!open);
        }}
      >
        Share
      </button>
      {open && (
        <div className="share-panel" data-testid="share-panel" role="dialog" aria-label="Share links">
          <p className="small muted">
            A share link shows this session read-only, live: the conversation, tool calls, terminal, timeline and (unless hidden) the hands&apos; files. Anyone with the
            link can read it; nobody can write through it.
          </p>
          <form onSubmit={submit}>
            <input type="text" aria-label="Label" placeholder="label, e.g. for Ana" value={label} maxLength={100} onChange={(e) => setLabel(e.target.value)} data-testid="share-label" />
            <select aria-label="Expires" value={hours ?? ''} onChange={(e) => setHours(e.target.value === '' ? null : Number(e.target.value))} data-testid="share-expiry">
              {EXPIRY_CHOICES.map(([name, h]) => (
                <option key={name} value={h ?? ''}>
                  {name}
                </option>
              ))}
            </select>
            <label className="small">
              <input type="checkbox" checked={hideFiles} onChange={(e) => setHideFiles(e.target.checked)} data-testid="share-hide-files" /> hide files
            </label>
            <button type="submit" className="primary" disabled={create.isPending} data-testid="share-create">
              Create link
            </button>
          </form>
          {create.error && <p className="error">{create.error.message}</p>}
          {made && (
            <div className="new-key" data-testid="share-new">
              {made.label ? <strong>{made.label}: </strong> : null}copy this link now; it will not be shown again.
              <code className="share-url" data-testid="share-url">
                {made.url}
              </code>
              <CopyButton text={made.url} testId="share-copy" />{' '}
              <button type="button" onClick={() => setMade(null)}>
                Done
              </button>
            </div>
          )}
          {links.error && <p className="error">{links.error.message}</p>}
          {links.data && links.data.length === 0 && <p className="muted small">No links yet.</p>}
          {links.data && links.data.length > 0 && (
            <ul data-testid="share-list">
              {links.data.map((l) => (
                <li key={l.id} data-testid="share-row" data-share={l.id}>
                  <strong>{l.label || 'unlabelled'}</strong>
                  <span className="small muted">made {timeAgo(l.created_at)}</span>
                  <span className="small muted">{l.expires_at ? (l.expired ? 'expired' : `expires ${new Date(l.expires_at).toLocaleString()}`) : 'no expiry'}</span>
                  {l.hide_files && <span className="small muted">files hidden</span>}
                  <button type="button" className="quiet" disabled={revoke.isPending} data-testid="share-revoke" onClick={() => revoke.mutate({ sessionId, id: l.id })}>
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
