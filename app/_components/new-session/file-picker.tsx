'use client';
import { useQuery } from '@tanstack/react-query';
import { formatBytes } from '~/app/_components/session-files/format-bytes';
import { useTRPC } from '~/lib/browser/trpc';

/** Files of the Files API a new session mounts read-only at /mnt/session/uploads/<filename>. */
export function FilePicker({ value, onChange }: { value: string[]; onChange: (ids: string[]) => void }) {
  const trpc = useTRPC();
  const files = useQuery(trpc.files.list.queryOptions({ limit: 100 }));
  const list = files.data ?? [];
  return (
    <label>
      <span className="muted small">files</span>
      <select
        multiple
        data-testid="new-session-files"
        value={value}
        disabled={list.length === 0}
        size={Math.max(1, Math.min(3, list.length))}
        title="Mounted read-only at /mnt/session/uploads/<name>; hold Ctrl or ⌘ to pick more than one"
        onChange={(e) => onChange(Array.from(e.target.selectedOptions, (o) => o.value))}
      >
        {list.length === 0 ? (
          <option value="" disabled>
            no files (upload with /v1/files)
          </option>
        ) : (
          list.map((f) => (
            <option key={f.id} value={f.id}>
              {f.filename} ({formatBytes(f.size_bytes)})
            </option>
          ))
        )}
      </select>
    </label>
  );
}
