'use client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { useTRPC } from '~/lib/browser/trpc';
import '~/app/_components/session-title/session-title.css';

/** The session's title; the owner renames it here (a `session.updated` in its log says so). */
export function SessionTitle({ sessionId, title, editable }: { sessionId: string; title: string; editable: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const id = useId();
  const [draft, setDraft] = useState<string | null>(null);
  const rename = useMutation(
    trpc.sessions.update.mutationOptions({
      onSuccess: () => {
        setDraft(null);
        void qc.invalidateQueries({ queryKey: trpc.sessions.get.queryKey({ id: sessionId }) });
        void qc.invalidateQueries({ queryKey: trpc.sessions.list.queryKey() });
      },
    }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (draft !== null) rename.mutate({ id: sessionId, title: draft });
  };

  if (draft === null) {
    return (
      <div className="session-title">
        <h1 data-testid="session-title">{title}</h1>
        {editable && (
          <button type="button" className="small quiet" data-testid="rename-toggle" onClick={() => setDraft(title)}>
            Rename
          </button>
        )}
      </div>
    );
  }
  return (
    <form className="session-title rename-form" onSubmit={submit} data-testid="rename-form">
      <label htmlFor={`${id}-title`} className="small muted">
        Title
      </label>
      <input id={`${id}-title`} type="text" required maxLength={200} value={draft} onChange={(e) => setDraft(e.target.value)} data-testid="rename-input" autoFocus />
      <button type="submit" className="primary small" disabled={rename.isPending} data-testid="rename-save">
        Save
      </button>
      <button type="button" className="small" onClick={() => setDraft(null)}>
        Cancel
      </button>
      {rename.error && (
        <span className="error small" role="alert">
          {rename.error.message}
        </span>
      )}
    </form>
  );
}
