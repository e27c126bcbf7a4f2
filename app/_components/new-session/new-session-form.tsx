'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { RepositoryFields } from '~/app/_components/new-session/repository-fields';
import { type RepositoryRow, plainCreateError, repositoryResources } from '~/app/_components/new-session/repository-rows';
import { VaultPicker } from '~/app/_components/new-session/vault-picker';
import { FilePicker } from '~/app/_components/new-session/file-picker';
import { MemoryStorePicker, type PickedStore } from '~/app/_components/new-session/memory-store-picker';
import { DEFAULT_AGENT_ID, DEFAULT_ENVIRONMENT_ID, unsupportedEnvironment } from '~/lib/agent';
import { useTRPC } from '~/lib/browser/trpc';
import { useHydrated } from '~/lib/browser/use-hydrated';

/** What a new session runs (agent, environment; the built-in defaults preselected), its vaults, files, memory stores and repositories. */
export function NewSessionForm({ disabled }: { disabled: boolean }) {
  const trpc = useTRPC();
  // Disabled in the server's HTML: a click before hydration would do nothing.
  const hydrated = useHydrated();
  // The built-in defaults work even if these lists fail.
  const agents = useQuery(trpc.agents.list.queryOptions({ limit: 100 }));
  const environments = useQuery(trpc.environments.list.queryOptions({ limit: 100 }));
  // Until the server says otherwise, what it allows by default.
  const support = useQuery(trpc.environments.support.queryOptions()).data ?? { allowUnrestrictedNetwork: false };
  const [agentId, setAgentId] = useState(DEFAULT_AGENT_ID);
  const [environmentId, setEnvironmentId] = useState(DEFAULT_ENVIRONMENT_ID);
  const [vaultIds, setVaultIds] = useState<string[]>([]);
  const [fileIds, setFileIds] = useState<string[]>([]);
  const [stores, setStores] = useState<PickedStore[]>([]);
  const files = useQuery(trpc.files.list.queryOptions({ limit: 100 }));
  const fileList = files.data ?? [];
  // The pickers appear as their lists arrive and push the button along: until every list has
  // answered (or failed) it stays disabled, so a click never lands while it moves (a press on it
  // then a release beside it is no click at all).
  const vaults = useQuery(trpc.vaults.list.queryOptions({ includeArchived: false }));
  const memoryStores = useQuery(trpc.memoryStores.list.queryOptions({ includeArchived: false }));
  const settling = [agents, environments, files, vaults, memoryStores].some((q) => q.isPending);
  const [repos, setRepos] = useState<RepositoryRow[]>([]);
  const create = useMutation(
    trpc.sessions.create.mutationOptions({
      onSuccess: (s) => {
        // The tokens were sent once; nothing here keeps them.
        setRepos([]);
        // A full page load: only it gets the session page's COOP/COEP (the tab hand's WebContainer needs them).
        window.location.assign(`/s/${s.id}`);
      },
    }),
  );
  const start = () => {
    // Each picked file at /mnt/session/uploads/<its name>; a name two files share gets the id instead.
    const names = fileIds.map((id) => fileList.find((f) => f.id === id)?.filename ?? id);
    const files = fileIds.map((id, i) => ({ type: 'file' as const, file_id: id, mount_path: names.indexOf(names[i]!) === i ? names[i]! : id }));
    const memory = stores.map((m) => ({ type: 'memory_store' as const, memory_store_id: m.id, access: m.readOnly ? ('read_only' as const) : ('read_write' as const) }));
    const resources = [...repositoryResources(repos), ...files, ...memory];
    create.mutate({ agentId, environmentId, ...(vaultIds.length > 0 ? { vault_ids: vaultIds } : {}), ...(resources.length > 0 ? { resources } : {}) });
  };

  return (
    <div className="new-session-form">
      <div className="new-session">
        <label>
          <span className="muted small">agent</span>
          <select data-testid="new-session-agent" value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            {(agents.data?.data ?? []).some((a) => a.id === DEFAULT_AGENT_ID) ? null : <option value={DEFAULT_AGENT_ID}>Default agent</option>}
            {(agents.data?.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} (v{a.version})
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="muted small">environment</span>
          <select data-testid="new-session-environment" value={environmentId} onChange={(e) => setEnvironmentId(e.target.value)}>
            {(environments.data?.data ?? []).some((e) => e.id === DEFAULT_ENVIRONMENT_ID) ? null : <option value={DEFAULT_ENVIRONMENT_ID}>Default environment</option>}
            {(environments.data?.data ?? [])
              .map((e) => ({ e, why: unsupportedEnvironment(e.config, support) }))
              .map(({ e, why }) => (
                // Offered but not choosable: the server would refuse a session there, saying why.
                <option key={e.id} value={e.id} disabled={why !== null} title={why ? `This environment ${why}` : undefined}>
                  {why ? `${e.name} (not runnable here)` : e.name}
                </option>
              ))}
          </select>
        </label>
        <VaultPicker value={vaultIds} onChange={setVaultIds} />
        <FilePicker value={fileIds} onChange={setFileIds} />
        <MemoryStorePicker value={stores} onChange={setStores} />
        <button type="button" className="primary" data-testid="new-session" disabled={!hydrated || disabled || settling || create.isPending} onClick={start}>
          {create.isPending ? 'Starting…' : 'New session'}
        </button>
      </div>
      <RepositoryFields rows={repos} onChange={setRepos} />
      {create.error && (
        <p className="error" role="alert" data-testid="new-session-error">
          Could not start a session: {plainCreateError(create.error.message)}
        </p>
      )}
    </div>
  );
}
