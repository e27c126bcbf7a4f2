import 'server-only';
import type { Agent, Environment } from '~/lib/agent';
import type { AgentStore } from '~/server/agents/agent-store';
import type { SessionDeps } from '~/server/commands/session-deps';
import { archiveNotifying, notify } from '~/server/commands/webhook-notify';

/**
 * Agents' and environments' writes, for both edges: the store validates and writes, this reports
 * each change as its webhook event (agent.*, environment.*), once, whichever edge asked.
 */
export interface AgentDeps extends Pick<SessionDeps, 'webhooks'> {
  agents: AgentStore;
}

export async function createAgent(d: AgentDeps, input: unknown): Promise<Agent> {
  const agent = await d.agents.createAgent(input);
  await notify(d, 'agent.created', agent.id);
  return agent;
}

export async function updateAgent(d: AgentDeps, id: string, input: unknown): Promise<Agent> {
  const agent = await d.agents.updateAgent(id, input);
  await notify(d, 'agent.updated', agent.id);
  return agent;
}

/** Archiving an archived agent changes nothing, and sends nothing. */
export async function archiveAgent(d: AgentDeps, id: string): Promise<Agent> {
  return archiveNotifying(d, 'agent.archived', id, () => d.agents.getAgent(id), () => d.agents.archiveAgent(id));
}

export async function createEnvironment(d: AgentDeps, input: unknown): Promise<Environment> {
  const env = await d.agents.createEnvironment(input);
  await notify(d, 'environment.created', env.id);
  return env;
}

export async function updateEnvironment(d: AgentDeps, id: string, input: unknown): Promise<Environment> {
  const env = await d.agents.updateEnvironment(id, input);
  await notify(d, 'environment.updated', env.id);
  return env;
}

export async function archiveEnvironment(d: AgentDeps, id: string): Promise<Environment> {
  return archiveNotifying(d, 'environment.archived', id, () => d.agents.getEnvironment(id), () => d.agents.archiveEnvironment(id));
}

export async function deleteEnvironment(d: AgentDeps, id: string): Promise<{ id: string; type: 'environment_deleted' }> {
  const deleted = await d.agents.deleteEnvironment(id);
  await notify(d, 'environment.deleted', id);
  return deleted;
}
