'use client';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '~/lib/browser/trpc';

/** The live vaults a session may use (its MCP servers' credentials come from them, first match wins). */
export function VaultPicker({ value, onChange }: { value: string[]; onChange: (ids: string[]) => void }) {
  const trpc = useTRPC();
  const vaults = useQuery(trpc.vaults.list.queryOptions({ includeArchived: false }));
  const list = vaults.data?.data ?? [];
  return (
    <label>
      <span className="muted small">vaults</span>
      <select
        multiple
        data-testid="new-session-vaults"
        value={value}
        disabled={list.length === 0}
        size={Math.max(1, Math.min(3, list.length))}
        title="Credentials for the agent's MCP servers; hold Ctrl or ⌘ to pick more than one"
        onChange={(e) => onChange(Array.from(e.target.selectedOptions, (o) => o.value))}
      >
        {list.length === 0 ? (
          <option value="" disabled>
            no vaults (Settings → Vaults)
          </option>
        ) : (
          list.map((v) => (
            <option key={v.id} value={v.id}>
              {v.display_name}
            </option>
          ))
        )}
      </select>
    </label>
  );
}
