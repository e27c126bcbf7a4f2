'use client';
import { useQuery } from '@tanstack/react-query';
import { MultiPicker } from '~/app/_components/new-session/multi-picker';
import { formatBytes } from '~/app/_components/session-files/format-bytes';
import { useTRPC } from '~/lib/browser/trpc';

/** Files of the Files API a new session mounts read-only at /mnt/session/uploads/<filename>. */
export function FilePicker({ value, onChange }: { value: string[]; onChange: (ids: string[]) => void }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.files.list.queryOptions({ limit: 100 })).data ?? [];
  return (
    <MultiPicker
      label="files"
      testId="new-session-files"
      items={list.map((f) => ({ value: f.id, label: `${f.filename} (${formatBytes(f.size_bytes)})` }))}
      value={value}
      onChange={onChange}
      empty="no files (upload with /v1/files)"
      title="Mounted read-only at /mnt/session/uploads/<name>"
    />
  );
}
