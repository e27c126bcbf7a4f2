'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { AgentForm } from '~/app/_components/agents/agent-form';
import { WidgetSettingsPanel } from '~/app/_components/agents/widget-settings';
import { timeAgo } from '~/app/_components/time';
import { DEFAULT_AGENT_ID, type Agent } from '~/lib/agent';
import { useTRPC } from '~/lib/browser/trpc';
import { NOT_BUILT, PADDOCK_TOOLS, TOOLSET_TOOLS, toolsetConfig } from '~/lib/toolset';

/** A one-line account of what an agent may do: enabled tools, the ones that ask, custom tools. */
function toolSummary(a: Agent): string {
  const names = [...TOOLSET_TOOLS, ...PADDOCK_TOOLS].filter((n) => !(n in NOT_BUILT));
  // Each tool as the harness sees it: its own config, else the toolset's default.
  const enabled = names.map((n) => toolsetConfig(a.tools, n)).filter((c) => c?.enabled === true);
  const asking = enabled.filter((c) => c?.permission_policy.type !== 'always_allow').map((c) => c?.name);
  const custom = a.tools.filter((t) => t.type === 'custom').map((t) => t.name);
  const parts = [enabled.length === names.length ? 'all toolset tools' : `${enabled.length} of ${names.length} toolset tools`];
  if (asking.length > 0) parts.push(`asks before ${asking.join(', ')}`);
  if (custom.length > 0) parts.push(`custom: ${custom.join(', ')}`);
  if (a.mcp_servers.length > 0) parts.push(`MCP: ${a.mcp_servers.map((s) => s.name).join(', ')}`);
  const context = contextSummary(a.context_policy);
  if (context) parts.push(context);
  return parts.join(' · ');
}

export function AgentList() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.agents.list.queryOptions({ limit: 100 }));
  const [editing, setEditing] = useState<Agent | 'new' | null>(null);
  const [widgetOf, setWidgetOf] = useState<string | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.agents.list.queryKey() });
  const archive = useMutation(trpc.agents.archive.mutationOptions({ onSuccess: () => void refresh() }));
  // Enabled only once hydrated: a click on the server-rendered button would otherwise do nothing.
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);

  const agents = list.data?.data ?? [];
  const defaultModel = agents.find((a) => a.id === DEFAULT_AGENT_ID)?.model.id ?? '';
  const confirmArchive = (a: Agent) => {
    if (window.confirm(`Archive "${a.name}"? Sessions already running it keep it; new sessions cannot pick it.`)) archive.mutate({ id: a.id });
  };

  return (
    <section>
      <div className="list-head">
        <h1>Agents</h1>
        <button type="button" className="primary" data-testid="new-agent" disabled={!hydrated || editing !== null} onClick={() => setEditing('new')}>
          New agent
        </button>
      </div>
      <p className="muted">An agent is a model, a system prompt and the tools it may use. Every edit is a new version; a session keeps the version it started with.</p>
      {editing !== null && (
        <AgentForm
          key={editing === 'new' ? 'new' : `${editing.id}@${editing.version}`}
          agent={editing === 'new' ? null : editing}
          defaultModel={defaultModel}
          onCancel={() => setEditing(null)}
          onDone={() => {
            setEditing(null);
            void refresh();
          }}
        />
      )}
      {list.error && <p className="error">{list.error.message}</p>}
      {archive.error && <p className="error">Could not archive: {archive.error.message}</p>}
      {list.isLoading && <p className="muted">Loading…</p>}
      <ul className="cards" data-testid="agents">
        {agents.map((a) => (
          <li key={a.id} className="card" data-testid="agent-row">
            <div className="card-head">
              <strong>{a.name}</strong>
              <span className="status" data-testid="agent-version">
                v{a.version}
              </span>
              {a.id === DEFAULT_AGENT_ID && <span className="status">default</span>}
            </div>
            {a.description && <div>{a.description}</div>}
            <div className="small">
              <span className="mono">{a.model.id}</span> · <span className="muted">{toolSummary(a)}</span>
            </div>
            <div className="mono muted small">
              {a.id} · updated {timeAgo(a.updated_at)}
            </div>
            <div className="card-actions">
              <button type="button" data-testid="edit-agent" disabled={!hydrated || editing !== null} onClick={() => setEditing(a)}>
                Edit
              </button>
              <button type="button" data-testid="agent-widget" disabled={!hydrated} aria-expanded={widgetOf === a.id} onClick={() => setWidgetOf(widgetOf === a.id ? null : a.id)}>
                Docs widget
              </button>
              {a.id !== DEFAULT_AGENT_ID && (
                <button type="button" className="quiet" data-testid="archive-agent" disabled={!hydrated || archive.isPending} onClick={() => confirmArchive(a)}>
                  Archive
                </button>
              )}
            </div>
            {widgetOf === a.id && <WidgetSettingsPanel agentId={a.id} onClose={() => setWidgetOf(null)} />}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The agent's context policy in a few words; nothing for the default (the full log). */
function contextSummary(p: Agent['context_policy']): string | null {
  const k = (n: number) => `${Math.round(n / 1000)}k tokens`;
  switch (p?.type) {
    case undefined:
    case 'full':
      return null;
    case 'window':
      return `context: window of ${k(p.max_input_tokens)}`;
    case 'clear_old_tool_results':
      return `context: newest ${p.keep_recent} tool outputs`;
    case 'compaction':
      return `context: compacted above ${k(p.trigger_input_tokens)}`;
  }
}
