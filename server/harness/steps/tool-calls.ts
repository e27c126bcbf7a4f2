import 'server-only';
import { offersRecall } from '~/lib/context-policy';
import { isStoreUnavailable } from '~/lib/errors';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { ToolError } from '~/lib/hand';
import { abortReason } from '~/lib/sleep';
import type { AgentToolUse, McpToolUse, ToolUse } from '~/server/harness/core/decide';
import { delegates, delegationEvents } from '~/server/harness/core/delegation';
import { isDelegationTool } from '~/lib/threads';
import { mcpSessionError, resultOf } from '~/server/harness/core/result-events';
import { SESSION_EVENTS_TOOL_NAME } from '~/server/harness/core/session-events';
import { allowedMcpTool, refuseUnallowed } from '~/server/harness/core/tool-permission';
import { type StepContext, type ThreadContext, handScope } from '~/server/harness/steps/step-context';
import { CallFailure, runToolCall } from '~/server/harness/steps/tool-call';
import { metrics } from '~/server/metrics/metrics';
import { traceToolCall } from '~/server/metrics/tracing';
import { isMcpUpstreamError } from '~/server/proxy/mcp-gateway';

/**
 * The turn's calls, run at once: toolset calls on their hands (or, for web_fetch and the recall
 * tool, here), MCP calls through the gateway. Each result is stored once, keyed by its call.
 */
export async function toolCalls(ctx: StepContext, action: { calls: ToolUse[] }, signal: AbortSignal): Promise<void> {
  const agent = await ctx.agent();
  // The whole log, read once for the step and only by a call that needs it (web_fetch, session_events).
  let whole: Promise<StoredEvent[]> | null = null;
  const upTo = ctx.view.lastSeq;
  const wholeLog = () => (whole ??= ctx.readLog(upTo));
  const scope = handScope(ctx, signal);
  const running = action.calls.map(async (call) => {
    if (call.type === 'agent.mcp_tool_use') return mcpCall(ctx, call, signal);
    if (ctx.thread && delegates(ctx.thread.delegation) && isDelegationTool(call.name)) return delegate(ctx, ctx.thread, call);
    const t0 = performance.now();
    let outcome: { text: string; hand?: string; isError: boolean };
    try {
      // Fail closed: a call the agent's tools do not allow never runs (decide() holds the ones
      // that ask until confirmed; this catches anything else, e.g. an agent changed under it).
      const recall = offersRecall(agent?.context_policy);
      // session_events is the harness's own read of the log, given with the context policy.
      if (agent && !(recall && call.name === SESSION_EVENTS_TOOL_NAME)) refuseUnallowed(agent.tools, call);
      outcome = { ...(await runToolCall(ctx.deps.hands, scope, call, signal, { tools: agent?.tools ?? null, log: wholeLog, recall })), isError: false };
    } catch (e) {
      if (signal.aborted) throw abortReason(signal);
      // The store failed, not the call (a hand event could not be written): the step is
      // retried, rather than the call recorded as failed.
      if (isStoreUnavailable(e)) throw e;
      outcome = { text: e instanceof Error ? e.message : String(e), isError: true, ...(e instanceof CallFailure ? { hand: e.hand } : {}) };
    }
    // The hand's kind is its id's stem (sandbox-2 → sandbox); a call run by the harness has none.
    const handKind = outcome.hand?.replace(/-\d+$/, '') ?? 'none';
    metrics().toolDuration.observe({ tool: call.name, hand_kind: handKind, outcome: outcome.isError ? 'error' : 'ok' }, (performance.now() - t0) / 1000);
    traceToolCall({ sessionId: ctx.sessionId, tool: call.name, handKind, startMs: t0, failed: outcome.isError });
    // Stored once per call, whoever retries it: so the result is kept across an outage.
    const result: NewEvent = {
      type: 'agent.tool_result',
      tool_use_id: call.id,
      ...(outcome.hand ? { hand: outcome.hand } : {}),
      ...(outcome.isError ? { is_error: true } : {}),
      content: [{ type: 'text', text: outcome.text }],
    };
    await ctx.write.keyed('store tool result', [result], call.id);
  });
  try {
    await Promise.all(running);
  } catch (e) {
    // A store failure retries the whole step: let the other calls finish first, so that no call
    // runs twice at once.
    if (isStoreUnavailable(e)) await Promise.allSettled(running);
    throw e;
  }
}

/** A delegation call (the primary thread's): its result, and a send's thread start and message, stored together, once. */
async function delegate(ctx: StepContext, thread: ThreadContext, call: AgentToolUse): Promise<void> {
  const agent = await ctx.agent();
  const { events } = delegationEvents(call, thread.delegation, thread.threads(), { primaryId: thread.primaryId, agentName: agent?.name ?? 'coordinator' });
  await ctx.write.keyed('store delegation', events, call.id);
}

/**
 * One MCP call through the gateway (on no hand): its result, and for a server that refused the
 * credential or could not be reached a `session.error` naming it, stored together, once.
 */
async function mcpCall(ctx: StepContext, call: McpToolUse, signal: AbortSignal): Promise<void> {
  const agent = await ctx.agent();
  const batch: NewEvent[] = [];
  const t0 = performance.now();
  try {
    allowedMcpTool(agent?.tools ?? null, ctx.view.mcpListing ?? [], call);
    const gateway = ctx.deps.mcp;
    if (!gateway) throw new ToolError(`MCP server ${call.mcp_server_name} cannot be reached: this server has no MCP proxy`);
    const res = await gateway.callTool(ctx.sessionId, call.mcp_server_name, call.name, call.input, signal);
    batch.push(resultOf(call, res.content, res.isError));
  } catch (e) {
    if (signal.aborted) throw abortReason(signal);
    if (isStoreUnavailable(e)) throw e;
    batch.push(resultOf(call, [{ type: 'text', text: e instanceof Error ? e.message : String(e) }], true));
    if (isMcpUpstreamError(e)) batch.push(mcpSessionError(e.kind, e.server, e.message));
  }
  const failed = batch.some((e) => e.type === 'agent.mcp_tool_result' && e.is_error === true);
  metrics().toolDuration.observe({ tool: `mcp:${call.mcp_server_name}`, hand_kind: 'none', outcome: failed ? 'error' : 'ok' }, (performance.now() - t0) / 1000);
  traceToolCall({ sessionId: ctx.sessionId, tool: `mcp:${call.mcp_server_name}`, handKind: 'none', startMs: t0, failed });
  await ctx.write.keyed('store mcp result', batch, call.id);
}
