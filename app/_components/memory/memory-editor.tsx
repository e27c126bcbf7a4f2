'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { timeAgo } from '~/app/_components/time';
import { useTRPC } from '~/lib/browser/trpc';
import { unreachable } from '~/lib/unreachable';

type Actor = { type: 'api_actor'; api_key_id: string } | { type: 'session_actor'; session_id: string } | { type: 'user_actor'; user_id: string };

function who(a: Actor | undefined): string {
  if (!a) return 'unknown';
  switch (a.type) {
    case 'api_actor':
      // `configured`: the key from PADDOCK_API_KEY.
      return a.api_key_id === 'configured' ? 'the configured API key' : `API key ${a.api_key_id}`;
    case 'session_actor':
      return `session ${a.session_id}`;
    case 'user_actor':
      return 'you';
    default:
      return unreachable(a);
  }
}

/**
 * One memory: its content edited in place (saved with the hash it was read at, so a change made
 * meanwhile is a conflict, not overwritten), deleted, and its versions, each redactable but the current.
 */
export function MemoryEditor({ storeId, memoryId, readOnly, onChanged, onDeleted }: { storeId: string; memoryId: string; readOnly: boolean; onChanged: () => void; onDeleted: () => void }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const memory = useQuery(trpc.memoryStores.memory.queryOptions({ storeId, id: memoryId }));
  const versions = useQuery(trpc.memoryStores.versions.queryOptions({ storeId, memoryId }));
  const [draft, setDraft] = useState<string | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  useEffect(() => setDraft(null), [memory.data?.content_sha256]);
  const changed = () => {
    void qc.invalidateQueries({ queryKey: trpc.memoryStores.memory.queryKey({ storeId, id: memoryId }) });
    onChanged();
  };
  const save = useMutation(trpc.memoryStores.updateMemory.mutationOptions({ onSuccess: changed }));
  const remove = useMutation(
    trpc.memoryStores.deleteMemory.mutationOptions({
      onSuccess: () => {
        onChanged();
        onDeleted();
      },
    }),
  );
  const redact = useMutation(trpc.memoryStores.redact.mutationOptions({ onSuccess: onChanged }));
  const version = useQuery({ ...trpc.memoryStores.version.queryOptions({ storeId, id: shown ?? '' }), enabled: shown !== null });
  const m = memory.data;
  const failed = memory.error ?? save.error ?? remove.error ?? redact.error;

  return (
    <div className="memory-editor" data-testid="memory-editor">
      {failed && <p className="error">{failed.message}</p>}
      {m && (
        <>
          <div className="card-head">
            <strong className="mono" data-testid="memory-path">
              {m.path}
            </strong>
            <span className="muted small">
              {m.content_size_bytes} bytes · updated {timeAgo(m.updated_at)}
            </span>
          </div>
          <textarea className="memory-content mono" rows={14} value={draft ?? m.content ?? ''} readOnly={readOnly} onChange={(e) => setDraft(e.target.value)} data-testid="memory-content" />
          {!readOnly && (
            <div className="card-actions">
              <button type="button" className="primary" disabled={draft === null || save.isPending} onClick={() => save.mutate({ storeId, id: m.id, content: draft ?? '', expectedSha256: m.content_sha256 })} data-testid="save-memory">
                Save
              </button>
              <button type="button" className="quiet" disabled={remove.isPending} onClick={() => window.confirm(`Delete ${m.path}? Its versions stay.`) && remove.mutate({ storeId, id: m.id, expectedSha256: m.content_sha256 })}>
                Delete
              </button>
            </div>
          )}
        </>
      )}
      <h3>Versions</h3>
      <ul className="cards" data-testid="memory-versions">
        {versions.data?.data.map((v) => (
          <li key={v.id} className="card" data-testid="memory-version">
            <div className="card-head">
              <span className="status">{v.operation}</span>
              <span className="small">by {who(v.created_by)}</span>
              <span className="muted small">{timeAgo(v.created_at)}</span>
              {v.redacted_at && <span className="status">redacted</span>}
            </div>
            <div className="mono muted small">
              {v.id}
              {v.content_sha256 ? ` · sha256 ${v.content_sha256.slice(0, 12)}…` : ''}
            </div>
            <div className="card-actions">
              {!v.redacted_at && v.operation !== 'deleted' && (
                <button type="button" className="quiet" onClick={() => setShown(shown === v.id ? null : v.id)}>
                  {shown === v.id ? 'Hide' : 'Show'}
                </button>
              )}
              {!v.redacted_at && v.id !== m?.memory_version_id && v.operation !== 'deleted' && (
                <button type="button" className="quiet" disabled={redact.isPending} onClick={() => window.confirm('Redact this version? Its content is erased for good.') && redact.mutate({ storeId, id: v.id })} data-testid="redact-version">
                  Redact
                </button>
              )}
            </div>
            {shown === v.id && version.data && <pre className="memory-version-content">{version.data.content}</pre>}
          </li>
        ))}
      </ul>
    </div>
  );
}
