import 'server-only';
import { z } from 'zod';
import { AgentCreateParams, AgentUpdateParams, McpServerParams, VaultId } from '~/lib/agent';
import { AgentId, PageCursor } from '~/server/api/inputs';
import { createTRPCRouter, ownerProcedure, protectedProcedure } from '~/server/api/trpc';
import { archiveAgent, createAgent, updateAgent } from '~/server/commands/agent-commands';
import { probeMcpServer } from '~/server/proxy/mcp-probe';

/**
 * Agents as the Managed Agents API defines them (versioned: an update writes a new version; a
 * session keeps the version it was made with). The store validates again; zod here makes a bad
 * field a BAD_REQUEST naming it before anything is read.
 */
export const agentsRouter = createTRPCRouter({
  list: protectedProcedure
    .input(z.object({ limit: z.number().int().min(1).max(100).default(50), page: PageCursor, includeArchived: z.boolean().default(false) }).default({ limit: 50, includeArchived: false }))
    .query(({ ctx, input }) => ctx.runtime.agents.listAgents({ limit: input.limit, page: input.page ?? null, includeArchived: input.includeArchived })),

  get: protectedProcedure
    .input(z.object({ id: AgentId, version: z.number().int().positive().optional() }))
    .query(({ ctx, input }) => ctx.runtime.agents.getAgent(input.id, input.version)),

  create: protectedProcedure.input(AgentCreateParams).mutation(({ ctx, input }) => createAgent(ctx.runtime, input)),

  /** `version` (optional) is the one the editor read: a stale one is a CONFLICT, never a lost update. */
  update: protectedProcedure.input(AgentUpdateParams.extend({ id: AgentId })).mutation(({ ctx, input }) => {
    const { id, ...params } = input;
    return updateAgent(ctx.runtime, id, params);
  }),

  archive: protectedProcedure.input(z.object({ id: AgentId })).mutation(({ ctx, input }) => {
    // A session made without naming an agent runs the default one: it has to stay usable.
    return archiveAgent(ctx.runtime, input.id);
  }),

  versions: protectedProcedure
    .input(z.object({ id: AgentId, limit: z.number().int().min(1).max(100).default(20), page: PageCursor }))
    .query(({ ctx, input }) => ctx.runtime.agents.listAgentVersions(input.id, { limit: input.limit, page: input.page ?? null })),

  /**
   * The agent form's "Test connection": one `tools/list` against the URL with the credential the
   * given vaults (none named: every live vault) hold for it. The owner's only: it makes the server
   * connect out and may use a vault's credential. Answers a status, never a credential.
   */
  testMcpServer: ownerProcedure.input(z.object({ url: McpServerParams.shape.url.max(2048), vaultIds: z.array(VaultId).max(100).optional() })).mutation(async ({ ctx, input }) => {
    let vaultIds = input.vaultIds;
    if (vaultIds) await ctx.runtime.vaults.requireUsableVaults(vaultIds);
    else vaultIds = (await ctx.runtime.vaults.listVaults({ limit: 100 })).data.map((v) => v.id);
    return probeMcpServer(ctx.runtime.vaultSecrets, input.url, vaultIds);
  }),
});
