'use client';
import { useQuery } from '@tanstack/react-query';
import { MultiPicker } from '~/app/_components/new-session/multi-picker';
import { useTRPC } from '~/lib/browser/trpc';

/** The live vaults a session may use (its MCP servers' credentials come from them, first match wins). */
export function VaultPicker({ value, onChange }: { value: string[]; onChange: (ids: string[]) => void }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.vaults.list.queryOptions({ includeArchived: false })).data?.data ?? [];
  return (
    <MultiPicker
      label="vaults"
      testId="new-session-vaults"
      items={list.map((v) => ({ value: v.id, label: v.display_name }))}
      value={value}
      onChange={onChange}
      empty="no vaults (Settings → Vaults)"
      title="Credentials for the agent's MCP servers"
    />
  );
}
