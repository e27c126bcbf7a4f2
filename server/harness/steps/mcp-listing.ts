import 'server-only';
import type { SessionAgent } from '~/lib/agent';
import { isStoreUnavailable } from '~/lib/errors';
import type { NewEvent } from '~/lib/events';
import { ToolError } from '~/lib/hand';
import { type McpServerListing, mcpServersToList } from '~/lib/mcp-tools';
import { mcpSessionError } from '~/server/harness/core/result-events';
import { StepAbort } from '~/server/harness/steps/step-abort';
import type { StepContext } from '~/server/harness/steps/step-context';
import { logger } from '~/server/log';
import { isMcpUpstreamError } from '~/server/proxy/mcp-gateway';

const log = logger('harness');

/** Whether the session's MCP servers still have to be listed before its next request. */
export function needsMcpListing(ctx: StepContext, agent: SessionAgent | null): boolean {
  return agent !== null && ctx.view.mcpListing === null && mcpServersToList(agent).length > 0;
}

/**
 * The session's MCP tools, listed once (and again after a session update changes the agent) and
 * stored in the log (`mcp.tools_listed`) so every later request, on any instance, offers the same
 * definitions. Returns null when it stored the listing
 * in this step (the loop re-reads the log and asks the model next), or was interrupted.
 */
export async function mcpListing(ctx: StepContext, agent: SessionAgent | null): Promise<McpServerListing[] | null> {
  const stored = ctx.view.mcpListing;
  if (stored) return stored;
  const servers = agent ? mcpServersToList(agent) : [];
  if (servers.length === 0) return [];
  const gateway = ctx.deps.mcp;
  const listed = await ctx.interruptible((signal) =>
    Promise.all(
      servers.map(async (s): Promise<{ listing: McpServerListing; error?: NewEvent }> => {
        try {
          if (!gateway) throw new ToolError(`MCP server "${s.name}" cannot be reached: this server has no MCP proxy`);
          return { listing: { mcp_server_name: s.name, tools: await gateway.listTools(ctx.sessionId, s.name, signal) } };
        } catch (e) {
          if (signal.aborted) throw e;
          if (isStoreUnavailable(e)) throw e;
          const kind = isMcpUpstreamError(e) ? e.kind : 'connection';
          const message = isMcpUpstreamError(e) || e instanceof ToolError ? e.message : `MCP server "${s.name}" could not be listed`;
          log.warn('mcp server not listed', { session: ctx.sessionId, server: s.name, kind });
          return { listing: { mcp_server_name: s.name, tools: [], error: kind }, error: mcpSessionError(kind, s.name, `${message}; the session goes on without its tools`) };
        }
      }),
    ),
  );
  // Interrupted: nothing stored; the next decide() sees the interrupt.
  if (listed instanceof StepAbort) return null;
  const batch: NewEvent[] = [{ type: 'mcp.tools_listed', servers: listed.map((l) => l.listing) }, ...listed.flatMap((l) => (l.error ? [l.error] : []))];
  await ctx.write.keyed('store mcp tools', batch, ctx.view.mcpListingKey);
  return null;
}
