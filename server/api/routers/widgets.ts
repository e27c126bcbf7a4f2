import 'server-only';
import { z } from 'zod';
import { DEFAULT_ENVIRONMENT_ID } from '~/lib/agent';
import { WIDGET_DEFAULTS, WidgetSettingsInput, toolsRunWithoutAsking } from '~/lib/widget';
import { AgentId } from '~/server/api/inputs';
import { createTRPCRouter, ownerProcedure } from '~/server/api/trpc';

/**
 * The owner's side of the docs widget: per agent, whether it is on, for which origins, in which
 * environment, with which budgets and limits. Only the owner (never a program's key: a leaked key
 * cannot open an agent to the world).
 */
export const widgetsRouter = createTRPCRouter({
  /**
   * The agent's settings (never saved: the defaults, off), with the tools its latest version runs
   * without asking: in the widget an anonymous visitor's message is enough to run those.
   */
  get: ownerProcedure.input(z.object({ agentId: AgentId })).query(async ({ ctx, input }) => {
    const agent = await ctx.runtime.agents.getAgent(input.agentId);
    const saved = await ctx.runtime.access.widgets.store.settings(input.agentId);
    const settings = saved ?? { ...WIDGET_DEFAULTS, environment_id: DEFAULT_ENVIRONMENT_ID, agent_id: input.agentId, updated_at: null };
    return { ...settings, agent_name: agent.name, unasked_tools: toolsRunWithoutAsking(agent.tools) };
  }),

  set: ownerProcedure.input(WidgetSettingsInput.extend({ agentId: AgentId })).mutation(({ ctx, input }) => {
    const { agentId, ...settings } = input;
    return ctx.runtime.access.widgets.store.save(agentId, settings);
  }),

  /** Every origin widget sessions came from (the session list's filter). */
  origins: ownerProcedure.query(({ ctx }) => ctx.runtime.access.widgets.store.origins()),
});
