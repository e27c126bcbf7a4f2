'use client';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { McpServersFieldset } from '~/app/_components/mcp-servers/mcp-servers-fieldset';
import { initialMcpRows, mcpParams, type McpRow } from '~/app/_components/mcp-servers/mcp-rows';
import { ContextPolicyFieldset } from '~/app/_components/context-policy/context-policy-fieldset';
import { type ContextPolicy, normalizeContextPolicy } from '~/lib/context-policy';
import type { Agent, AgentSkill } from '~/lib/agent';
import { SkillsFieldset } from '~/app/_components/skills/skills-fieldset';
import { useTRPC } from '~/lib/browser/trpc';
import { type AgentToolParams, CUSTOM_TOOL_NAME, NOT_BUILT, PADDOCK_TOOLS, TOOLSET_TOOLS, type ToolConfig, toolsetConfig } from '~/lib/toolset';

// The tools the model can be given here (web_search is not built: never offered).
const TOOL_NAMES = [...TOOLSET_TOOLS, ...PADDOCK_TOOLS].filter((n): n is Exclude<(typeof TOOLSET_TOOLS)[number], keyof typeof NOT_BUILT> | (typeof PADDOCK_TOOLS)[number] => !(n in NOT_BUILT));
type ToolName = (typeof TOOL_NAMES)[number];
type Policy = 'always_allow' | 'always_ask';
interface ToolRow {
  enabled: boolean;
  policy: Policy;
  /** The stored config, kept so fields this form does not edit (domains, limits) survive a save. */
  stored: ToolConfig | null;
}
/** What a row's name alone does not say. */
const TOOL_HINTS: Partial<Record<ToolName, string>> = {
  web_fetch: "Fetches a URL from the server (any hand, or none), only from hosts the session's environment allows",
};

/** Domain limits set through the API (kept on save; not edited here). */
function domainsNote(c: ToolConfig | null): string | null {
  if (c?.allowed_domains) return `only ${c.allowed_domains.join(', ')}`;
  if (c?.blocked_domains) return `not ${c.blocked_domains.join(', ')}`;
  return null;
}

interface CustomRow {
  key: string;
  name: string;
  description: string;
  schema: string;
}

/** What the toolset rows start as: the agent's own settings, or (a new agent) everything allowed. */
function initialTools(agent: Agent | null): Record<ToolName, ToolRow> {
  const rows = {} as Record<ToolName, ToolRow>;
  for (const name of TOOL_NAMES) {
    if (!agent) {
      rows[name] = { enabled: true, policy: 'always_allow', stored: null };
      continue;
    }
    const c = toolsetConfig(agent.tools, name);
    // `auto` is run as ask by the harness until it has a classifier: shown as what it does.
    rows[name] = { enabled: c?.enabled ?? false, policy: c?.permission_policy.type === 'always_allow' ? 'always_allow' : 'always_ask', stored: c };
  }
  return rows;
}

function initialCustom(agent: Agent | null): CustomRow[] {
  return (agent?.tools ?? []).flatMap((t) => (t.type === 'custom' ? [{ key: crypto.randomUUID(), name: t.name, description: t.description, schema: JSON.stringify(t.input_schema, null, 2) }] : []));
}

const EMPTY_SCHEMA = '{\n  "type": "object",\n  "properties": {}\n}';

/** Builds the agent's `tools[]` from the form; a custom tool's schema that is not JSON is named. */
function toolsParams(agent: Agent | null, rows: Record<ToolName, ToolRow>, custom: CustomRow[], mcpToolsets: AgentToolParams[]): AgentToolParams[] {
  // Every tool shown is written out; the default (for tools a later Paddock adds) stays what it was.
  const before = agent?.tools.find((t) => t.type === 'agent_toolset_20260401');
  const toolset: AgentToolParams = {
    type: 'agent_toolset_20260401',
    default_config: before?.default_config ?? { enabled: true, permission_policy: { type: 'always_allow' } },
    configs: TOOL_NAMES.map((name) => ({ ...(rows[name].stored ?? {}), name, type: name, enabled: rows[name].enabled, permission_policy: { type: rows[name].policy } })),
  };
  const customs = custom.map((c): AgentToolParams => {
    let schema: unknown;
    try {
      schema = JSON.parse(c.schema);
    } catch {
      throw new Error(`custom tool ${c.name || '(unnamed)'}: the input schema is not valid JSON`);
    }
    return { type: 'custom', name: c.name.trim(), description: c.description.trim(), input_schema: schema as { type: 'object' } };
  });
  return [toolset, ...mcpToolsets, ...customs];
}

/** Creates an agent or edits one (an edit is a new version; a stale one is refused, not lost). */
export function AgentForm({ agent, defaultModel, onDone, onCancel }: { agent: Agent | null; defaultModel: string; onDone: () => void; onCancel: () => void }) {
  const trpc = useTRPC();
  const [name, setName] = useState(agent?.name ?? '');
  const [description, setDescription] = useState(agent?.description ?? '');
  const [model, setModel] = useState(agent?.model.id ?? defaultModel);
  const [system, setSystem] = useState(agent?.system ?? '');
  const [tools, setTools] = useState(() => initialTools(agent));
  const [custom, setCustom] = useState(() => initialCustom(agent));
  const [mcp, setMcp] = useState<McpRow[]>(() => initialMcpRows(agent, () => crypto.randomUUID()));
  const [contextPolicy, setContextPolicy] = useState<ContextPolicy>(() => normalizeContextPolicy(agent?.context_policy));
  // Older agent versions were stored before skills existed.
  const [skills, setSkills] = useState<AgentSkill[]>(() => agent?.skills ?? []);
  const [formError, setFormError] = useState<string | null>(null);
  // A new agent starts on the default agent's model, which may arrive after the form opened.
  useEffect(() => {
    if (!agent && defaultModel) setModel((m) => m || defaultModel);
  }, [agent, defaultModel]);
  const create = useMutation(trpc.agents.create.mutationOptions({ onSuccess: onDone }));
  const update = useMutation(trpc.agents.update.mutationOptions({ onSuccess: onDone }));
  const pending = create.isPending || update.isPending;
  const failed = create.error ?? update.error;

  const setTool = (n: ToolName, patch: Partial<ToolRow>) => setTools((t) => ({ ...t, [n]: { ...t[n], ...patch } }));
  const setCustomRow = (key: string, patch: Partial<CustomRow>) => setCustom((rows) => rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setFormError(null);
    let toolList: AgentToolParams[];
    const servers = mcpParams(agent, mcp);
    try {
      toolList = toolsParams(agent, tools, custom, servers.toolsets);
    } catch (err) {
      setFormError((err as Error).message);
      return;
    }
    const common = { name: name.trim(), description: description.trim() || null, system: system.trim() ? system : null, tools: toolList, mcp_servers: servers.mcp_servers, skills, context_policy: contextPolicy };
    if (!agent) create.mutate({ ...common, model: model.trim() });
    // The model is sent only when changed, so settings this form does not show (effort, speed) stay.
    else update.mutate({ id: agent.id, version: agent.version, ...common, ...(model.trim() !== agent.model.id ? { model: model.trim() } : {}) });
  };

  return (
    <form className="edit-form" onSubmit={submit} data-testid="agent-form">
      <h2>{agent ? `Edit ${agent.name} (version ${agent.version})` : 'New agent'}</h2>
      <div className="fields">
        <label>
          Name
          <input data-testid="agent-name" value={name} maxLength={256} required onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Model id
          <input data-testid="agent-model" className="mono" value={model} maxLength={128} required onChange={(e) => setModel(e.target.value)} />
        </label>
        <label className="wide">
          Description
          <input value={description} maxLength={2048} onChange={(e) => setDescription(e.target.value)} placeholder="what this agent is for" />
        </label>
        <label className="wide">
          System prompt
          <textarea data-testid="agent-system" value={system} rows={5} maxLength={100_000} onChange={(e) => setSystem(e.target.value)} placeholder="empty: none" />
        </label>
      </div>

      <fieldset>
        <legend>Tools</legend>
        <p className="muted small">Ask first: the session waits for you to allow or deny each call before it runs.</p>
        <div className="tool-grid">
          {TOOL_NAMES.map((n) => (
            <div key={n} className="tool-row" data-testid={`tool-${n}`}>
              <label className="check" title={TOOL_HINTS[n]}>
                <input type="checkbox" checked={tools[n].enabled} onChange={(e) => setTool(n, { enabled: e.target.checked })} />
                <span className="mono">{n}</span>
                {domainsNote(tools[n].stored) && <span className="muted small">{domainsNote(tools[n].stored)}</span>}
              </label>
              <select aria-label={`${n} permission`} data-testid={`policy-${n}`} value={tools[n].policy} disabled={!tools[n].enabled} onChange={(e) => setTool(n, { policy: e.target.value as Policy })}>
                <option value="always_allow">always allow</option>
                <option value="always_ask">ask first</option>
              </select>
            </div>
          ))}
        </div>
      </fieldset>

      <McpServersFieldset rows={mcp} onChange={setMcp} />

      <SkillsFieldset value={skills} onChange={setSkills} />

      <ContextPolicyFieldset value={contextPolicy} onChange={setContextPolicy} />

      <fieldset>
        <legend>Custom tools</legend>
        <p className="muted small">Answered by your program (user.custom_tool_result), not run by Paddock.</p>
        {custom.map((c) => (
          <div key={c.key} className="custom-tool" data-testid="custom-tool">
            <label>
              Name
              <input className="mono" value={c.name} required pattern={CUSTOM_TOOL_NAME.source} title="1-64 letters, digits, _ or -" onChange={(e) => setCustomRow(c.key, { name: e.target.value })} />
            </label>
            <label>
              Description
              <input value={c.description} required maxLength={10_000} onChange={(e) => setCustomRow(c.key, { description: e.target.value })} />
            </label>
            <label className="wide">
              Input schema (JSON)
              <textarea className="mono" rows={4} value={c.schema} onChange={(e) => setCustomRow(c.key, { schema: e.target.value })} />
            </label>
            <button type="button" className="quiet" onClick={() => setCustom((rows) => rows.filter((r) => r.key !== c.key))}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" data-testid="add-custom-tool" onClick={() => setCustom((rows) => [...rows, { key: crypto.randomUUID(), name: '', description: '', schema: EMPTY_SCHEMA }])}>
          Add custom tool
        </button>
      </fieldset>

      {(formError ?? failed) && (
        <p className="error" role="alert" data-testid="agent-form-error">
          {formError ?? (failed?.data?.code === 'CONFLICT' ? `${failed.message}. Close the editor and open the agent again.` : failed?.message)}
        </p>
      )}
      <div className="form-actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary" data-testid="save-agent" disabled={pending}>
          {pending ? 'Saving…' : agent ? 'Save as a new version' : 'Create agent'}
        </button>
      </div>
    </form>
  );
}
