'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { type FormEvent, useState } from 'react';
import { MemoryEditor } from '~/app/_components/memory/memory-editor';
import { useTRPC } from '~/lib/browser/trpc';

/** The prefixes above a path: `/a/b/` → `/`, `/a/`, `/a/b/`. */
function crumbs(prefix: string): string[] {
  const parts = prefix.split('/').filter(Boolean);
  return ['/', ...parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}/`)];
}

/** One store: its memories browsed a directory at a time, one open to read and edit, a new one written. */
export function MemoryBrowser({ storeId }: { storeId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [prefix, setPrefix] = useState('/');
  const [open, setOpen] = useState<string | null>(null);
  const [newPath, setNewPath] = useState('');
  const [newContent, setNewContent] = useState('');
  const store = useQuery(trpc.memoryStores.get.queryOptions({ id: storeId }));
  const items = useQuery(trpc.memoryStores.memories.queryOptions({ storeId, pathPrefix: prefix, depth: 1 }));
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: trpc.memoryStores.memories.queryKey() });
    void qc.invalidateQueries({ queryKey: trpc.memoryStores.versions.queryKey() });
  };
  const create = useMutation(
    trpc.memoryStores.createMemory.mutationOptions({
      onSuccess: (m) => {
        setNewPath('');
        setNewContent('');
        setOpen(m.id);
        refresh();
      },
    }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ storeId, path: newPath, content: newContent });
  };
  const readOnly = store.data?.archived_at != null;

  return (
    <section>
      <div className="list-head">
        <h1>
          <Link href="/memory" className="muted">
            Memory
          </Link>{' '}
          / <span data-testid="memory-store-title">{store.data?.name ?? '…'}</span>
        </h1>
      </div>
      {store.data?.description && <p className="muted">{store.data.description}</p>}
      {store.error && <p className="error">{store.error.message}</p>}
      <div className="memory-layout">
        <div className="memory-tree" data-testid="memory-tree">
          <nav className="memory-crumbs">
            {crumbs(prefix).map((c) => (
              <button key={c} type="button" className="link" onClick={() => setPrefix(c)}>
                {c === '/' ? '/' : `${c.split('/').filter(Boolean).at(-1)}/`}
              </button>
            ))}
          </nav>
          {items.error && <p className="error">{items.error.message}</p>}
          {items.data && items.data.data.length === 0 && <p className="muted small">Nothing here yet.</p>}
          <ul className="memory-items">
            {items.data?.data.map((i) =>
              i.type === 'memory_prefix' ? (
                <li key={i.path}>
                  <button type="button" className="link" data-testid="memory-prefix" onClick={() => setPrefix(i.path)}>
                    📁 {i.path.slice(prefix.length)}
                  </button>
                </li>
              ) : (
                <li key={i.id} className={open === i.id ? 'selected' : ''}>
                  <button type="button" className="link" data-testid="memory-item" onClick={() => setOpen(i.id)}>
                    {i.path.slice(prefix.length)}
                  </button>
                  <span className="muted small"> {i.content_size_bytes} B</span>
                </li>
              ),
            )}
          </ul>
          {!readOnly && (
            <form onSubmit={submit} className="edit-form memory-new">
              <label>
                New memory path
                <input placeholder={`${prefix}notes.md`} value={newPath} onChange={(e) => setNewPath(e.target.value)} required data-testid="new-memory-path" />
              </label>
              <label>
                Content
                <textarea rows={4} value={newContent} onChange={(e) => setNewContent(e.target.value)} data-testid="new-memory-content" />
              </label>
              <button type="submit" className="primary" disabled={create.isPending || newPath.trim() === ''} data-testid="create-memory">
                Write memory
              </button>
              {create.error && <p className="error">{create.error.message}</p>}
            </form>
          )}
        </div>
        <div className="memory-pane">
          {open ? <MemoryEditor key={open} storeId={storeId} memoryId={open} readOnly={readOnly} onChanged={refresh} onDeleted={() => setOpen(null)} /> : <p className="muted">Pick a memory to read it, edit it and see its versions.</p>}
        </div>
      </div>
    </section>
  );
}
