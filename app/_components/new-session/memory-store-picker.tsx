'use client';
import { useQuery } from '@tanstack/react-query';
import { MultiPicker } from '~/app/_components/new-session/multi-picker';
import { MAX_SESSION_MEMORY_STORES } from '~/lib/agent';
import { useTRPC } from '~/lib/browser/trpc';

export interface PickedStore {
  id: string;
  readOnly: boolean;
}

/**
 * Memory stores a new session attaches (at most 8), each at /mnt/memory/<name>/, writable unless
 * marked read-only; what the agent changes there becomes versions by the session.
 */
export function MemoryStorePicker({ value, onChange }: { value: PickedStore[]; onChange: (stores: PickedStore[]) => void }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.memoryStores.list.queryOptions({ includeArchived: false })).data?.data ?? [];
  const nameOf = (id: string) => list.find((s) => s.id === id)?.name ?? id;
  const pick = (ids: string[]) => onChange(ids.slice(0, MAX_SESSION_MEMORY_STORES).map((id) => value.find((v) => v.id === id) ?? { id, readOnly: false }));
  return (
    <div className="memory-store-picker">
      <MultiPicker
        label="memory"
        testId="new-session-memory"
        items={list.map((s) => ({ value: s.id, label: s.name }))}
        value={value.map((v) => v.id)}
        onChange={pick}
        empty="no memory stores (Memory)"
        title={`At /mnt/memory/<name>/, at most ${MAX_SESSION_MEMORY_STORES}`}
      />
      {value.map((v) => (
        <label key={v.id} className="small muted memory-store-access">
          <input
            type="checkbox"
            data-testid={`new-session-memory-readonly-${v.id}`}
            checked={v.readOnly}
            onChange={(e) => onChange(value.map((x) => (x.id === v.id ? { ...x, readOnly: e.target.checked } : x)))}
          />{' '}
          {nameOf(v.id)} read-only
        </label>
      ))}
    </div>
  );
}
