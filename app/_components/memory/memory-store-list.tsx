'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { type FormEvent, useState } from 'react';
import { timeAgo } from '~/app/_components/time';
import { useTRPC } from '~/lib/browser/trpc';

/** The memory stores page: make a store, open one to browse its memories, archive or delete it. */
export function MemoryStoreList() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.memoryStores.list.queryOptions({ includeArchived: true }));
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.memoryStores.list.queryKey() });
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation(
    trpc.memoryStores.create.mutationOptions({
      onSuccess: () => {
        setName('');
        setDescription('');
        void refresh();
      },
    }),
  );
  const archive = useMutation(trpc.memoryStores.archive.mutationOptions({ onSuccess: () => void refresh() }));
  const remove = useMutation(trpc.memoryStores.delete.mutationOptions({ onSuccess: () => void refresh() }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ name, description });
  };
  const failed = create.error ?? archive.error ?? remove.error ?? list.error;

  return (
    <section>
      <div className="list-head">
        <h1>Memory</h1>
      </div>
      <p className="muted">
        Stores of text memories that outlive a session. A session that attaches one (<span className="mono">resources: memory_store</span>) finds it at{' '}
        <span className="mono">/mnt/memory/&lt;name&gt;/</span>; every change is kept as a version.
      </p>
      <form onSubmit={submit} className="memory-create">
        <input aria-label="Store name" placeholder="store name, e.g. team notes" value={name} maxLength={255} onChange={(e) => setName(e.target.value)} required data-testid="memory-store-name" />
        <input aria-label="Description" placeholder="what it holds (shown to the agent)" value={description} maxLength={4096} onChange={(e) => setDescription(e.target.value)} />
        <button type="submit" className="primary" disabled={create.isPending || name.trim() === ''} data-testid="create-memory-store">
          Create store
        </button>
      </form>
      {failed && <p className="error">{failed.message}</p>}
      {list.isLoading && <p className="muted">Loading…</p>}
      {list.data && list.data.data.length === 0 && <p className="muted">No memory stores yet.</p>}
      <ul className="cards" data-testid="memory-stores">
        {list.data?.data.map((s) => (
          <li key={s.id} className={`card ${s.archived_at ? 'archived' : ''}`} data-testid="memory-store-row">
            <div className="card-head">
              <Link href={`/memory/${s.id}`}>
                <strong>{s.name}</strong>
              </Link>
              {s.archived_at && <span className="status">archived</span>}
            </div>
            {s.description && <div>{s.description}</div>}
            <div className="mono muted small">
              {s.id} · updated {timeAgo(s.updated_at)}
            </div>
            <div className="card-actions">
              {!s.archived_at && (
                <button type="button" className="quiet" disabled={archive.isPending} onClick={() => archive.mutate({ id: s.id })}>
                  Archive
                </button>
              )}
              <button type="button" className="quiet" disabled={remove.isPending} onClick={() => window.confirm(`Delete "${s.name}", its memories and all their versions?`) && remove.mutate({ id: s.id })}>
                Delete
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
