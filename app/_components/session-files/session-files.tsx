'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ChangeEvent, useRef, useState } from 'react';
import { useTRPC } from '~/lib/browser/trpc';
import { formatBytes } from '~/app/_components/session-files/format-bytes';
import '~/app/_components/session-files/session-files.css';

/** The bytes of a picked file as base64 (the tRPC upload's body). */
async function base64Of(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/**
 * A session's files under its title: what its hands read at /mnt/session/uploads (each with a
 * download link), what its agent left in /mnt/session/outputs (collected after each tool call that
 * changed them), and "Add a file", which uploads one and mounts it (a running session's hands have
 * it for their next call).
 */
export function SessionFiles({ sessionId, ended }: { sessionId: string; ended: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const files = useQuery({ ...trpc.files.ofSession.queryOptions({ sessionId }), refetchInterval: 5_000 });
  const input = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<string | null>(null);
  const upload = useMutation(trpc.files.upload.mutationOptions());
  const add = useMutation(trpc.files.addToSession.mutationOptions());
  const busy = upload.isPending || add.isPending;

  const pick = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (!file) return;
    setError(null);
    try {
      const made = await upload.mutateAsync({ filename: file.name, mimeType: file.type, base64: await base64Of(file) });
      await add.mutateAsync({ sessionId, fileId: made.id, mountPath: file.name });
      await qc.invalidateQueries({ queryKey: trpc.files.ofSession.queryKey({ sessionId }) });
      await qc.invalidateQueries({ queryKey: trpc.sessions.get.queryKey({ id: sessionId }) });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  const uploads = files.data?.uploads ?? [];
  const outputs = files.data?.outputs ?? [];
  return (
    <div className="session-files small" data-testid="session-files">
      <div className="session-files-row">
        <span className="muted">uploads:</span>
        {uploads.length === 0 && <span className="muted">none</span>}
        {uploads.map((u) => (
          <span key={u.id} className="session-file" data-testid="session-upload">
            {u.file ? (
              <a href={`/files/${u.file_id}`} download title={`${u.file.filename}, ${formatBytes(u.file.size_bytes)}`}>
                {u.mount_path.replace('/mnt/session/uploads/', '')}
              </a>
            ) : (
              <span className="muted" title="deleted from the Files API">
                {u.mount_path.replace('/mnt/session/uploads/', '')} (gone)
              </span>
            )}
          </span>
        ))}
        {!ended && (
          <>
            <button type="button" className="small" data-testid="add-file" disabled={busy} onClick={() => input.current?.click()}>
              {busy ? 'Adding…' : 'Add a file'}
            </button>
            <input ref={input} type="file" hidden data-testid="add-file-input" onChange={(e) => void pick(e)} />
          </>
        )}
      </div>
      <div className="session-files-row">
        <span className="muted">outputs:</span>
        {outputs.length === 0 && <span className="muted">none yet (what the agent writes to /mnt/session/outputs)</span>}
        {outputs.map((o) => (
          <a key={o.id} className="session-file" href={`/files/${o.id}`} download data-testid="session-output" title={`${o.mime_type}, ${formatBytes(o.size_bytes)}`}>
            {o.filename} <span className="muted">{formatBytes(o.size_bytes)}</span>
          </a>
        ))}
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
