import type { SessionAgent } from '~/lib/agent';
import { type ContextPolicy, normalizeContextPolicy } from '~/lib/context-policy';
import { AgentToolsParams, normalizeTools } from '~/lib/toolset';

/** A session's agent for tests: the whole toolset, always allowed, under a context policy. */
export function policyAgent(policy: ContextPolicy, system: string | null = null): SessionAgent {
  return {
    id: 'agent_policy', type: 'agent', version: 1, name: 'policy', description: null, model: { id: 'claude-agent-model' }, system,
    tools: normalizeTools(AgentToolsParams.parse([{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_allow' } } }])),
    mcp_servers: [], skills: [], execution_identity: null, multiagent: null,
    context_policy: normalizeContextPolicy(policy),
  };
}
