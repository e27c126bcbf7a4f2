import 'server-only';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { DEFAULT_AGENT_ID, MAX_SESSION_FILES, MAX_SESSION_MEMORY_STORES, MAX_SESSION_REPOSITORIES, ResourceParams, SessionUpdateParams, VaultId } from '~/lib/agent';
import { WidgetOrigin } from '~/lib/widget';
import { listResources } from '~/server/commands/resource-commands';
import { createSession, deleteSession, updateSession } from '~/server/commands/session-commands';
import { AgentId, EnvironmentId, SessionId } from '~/server/api/inputs';
import { createTRPCRouter, protectedProcedure, sessionReadProcedure } from '~/server/api/trpc';
import type { ListQuery } from '~/server/session/store';
import { unreachable } from '~/lib/unreachable';

const ListStatus = z.enum(['needs_approval', 'running', 'idle', 'rescheduling', 'terminated']);

/** The list's status as the store filters it: `idle` there means idle and not waiting for a verdict. */
function statusFilter(status: z.output<typeof ListStatus>): Pick<ListQuery, 'statuses' | 'needsApproval'> {
  switch (status) {
    case 'needs_approval':
      return { statuses: ['idle'], needsApproval: true };
    case 'idle':
      return { statuses: ['idle'], needsApproval: false };
    case 'running':
    case 'rescheduling':
    case 'terminated':
      return { statuses: [status] };
    default:
      return unreachable(status);
  }
}

export const sessionsRouter = createTRPCRouter({
  /**
   * A session runs an agent in an environment; with none named, the built-in defaults (so a bare
   * "New session" works on a fresh server). Goes through the same path as the REST API.
   */
  create: protectedProcedure
    .input(
      z
        .object({
          title: z.string().trim().min(1).max(200).optional(),
          agentId: AgentId.optional(),
          environmentId: EnvironmentId.optional(),
          // As the REST API takes them: vaults for the MCP proxy, repositories cloned at provision (a token sealed, never answered).
          vault_ids: z.array(VaultId).max(20).optional(),
          resources: z.array(ResourceParams).max(MAX_SESSION_FILES + MAX_SESSION_REPOSITORIES + MAX_SESSION_MEMORY_STORES).optional(),
        })
        .default({}),
    )
    .mutation(({ ctx, input }) =>
      createSession(ctx.runtime, {
        agent: input.agentId ?? DEFAULT_AGENT_ID,
        ...(input.environmentId ? { environment_id: input.environmentId } : {}),
        ...(input.title ? { title: input.title } : {}),
        ...(input.vault_ids ? { vault_ids: input.vault_ids } : {}),
        ...(input.resources ? { resources: input.resources } : {}),
      }),
    ),

  /** The session list, newest activity first; filtered by agent, and to the sessions a docs widget started (from one origin, or `*`: any). */
  list: protectedProcedure
    .input(
      z
        .object({
          limit: z.number().int().min(1).max(200).default(50),
          cursor: z.string().max(200).nullish(),
          agentId: AgentId.optional(),
          widgetOrigin: z.union([z.literal('*'), WidgetOrigin]).optional(),
          /** Only titles containing this (any case). */
          q: z.string().trim().max(200).optional(),
          /** A status as the list shows it: `needs_approval` is an idle session a call's verdict waits on. */
          status: ListStatus.optional(),
        })
        .default({ limit: 50 }),
    )
    .query(async ({ ctx, input }) => {
      const page = await ctx.runtime.store.listSessions({
        limit: input.limit,
        cursor: input.cursor ?? null,
        ...(input.agentId ? { agentId: input.agentId } : {}),
        ...(input.widgetOrigin ? { widgetOrigin: input.widgetOrigin } : {}),
        ...(input.q ? { titleContains: input.q } : {}),
        ...(input.status ? statusFilter(input.status) : {}),
      });
      const marks = await ctx.runtime.access.widgets.store.marks(page.data.map((s) => s.id));
      return { ...page, data: page.data.map((s) => ({ ...s, widget: marks.get(s.id) ?? null })) };
    }),

  /** The session with its resources (repositories: url, mount path, checkout, never a token; files: id and mount path). */
  get: protectedProcedure.input(z.object({ id: SessionId })).query(async ({ ctx, input }) => {
    const session = await ctx.runtime.store.getSession(input.id);
    if (!session) throw new TRPCError({ code: 'NOT_FOUND', message: `session ${input.id} not found` });
    return { ...session, resources: await listResources(ctx.runtime, session.id) };
  }),

  /**
   * The session as a share link shows it (the share page asks this instead of `get`): what the
   * page shows and nothing of the owner's setup (no metadata, vaults, environment or
   * repositories; of the agent its name, version and model only), and which brain answers (the
   * offline demo brain is labelled for a viewer too).
   */
  shared: sessionReadProcedure('id')
    .input(z.object({ id: SessionId }))
    .query(async ({ ctx, input }) => {
      const session = await ctx.runtime.store.getSession(input.id);
      if (!session) throw new TRPCError({ code: 'NOT_FOUND', message: `session ${input.id} not found` });
      const { id, title, created_at, updated_at, status, last_seq, agent } = session;
      return { id, title, created_at, updated_at, status, last_seq, agent: agent ? { name: agent.name, version: agent.version, model: { id: agent.model.id } } : null, environment_id: null, resources: [], brain: { label: ctx.runtime.harness.model.label, isDemo: ctx.runtime.harness.model.isDemo } };
    }),

  /** Who is calling (the settings page says whether this browser is signed in as the owner). */
  me: protectedProcedure.query(({ ctx }) => ({ kind: ctx.caller.kind })),

  /**
   * Deletes a session for good: its hands end and their workspaces are removed (only now: a
   * suspended or idle session keeps its files), then its log and rows go.
   */
  delete: protectedProcedure.input(z.object({ id: SessionId })).mutation(async ({ ctx, input }) => ({ id: (await deleteSession(ctx.runtime, input.id)).id, deleted: true as const })),

  /** Renames a session: the same command as `/v1`'s update, so the change and its `session.updated` are one write. */
  update: protectedProcedure
    .input(z.object({ id: SessionId, title: SessionUpdateParams.shape.title.unwrap().unwrap() }))
    .mutation(({ ctx, input }) => updateSession(ctx.runtime, input.id, { title: input.title })),

  /** Which brain answers: the UI labels the offline demo brain so it is never mistaken for Claude. */
  brain: protectedProcedure.query(({ ctx }) => ({ label: ctx.runtime.harness.model.label, isDemo: ctx.runtime.harness.model.isDemo })),
});
