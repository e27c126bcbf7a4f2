import 'server-only';
import { type ContextPolicy, FULL_CONTEXT, offersRecall } from '~/lib/context-policy';
import type { NewEvent } from '~/lib/events';
import { newId } from '~/lib/ids';
import { mcpToolsFor } from '~/lib/mcp-tools';
import { BRAIN_TOOLS, toolSpecsFor } from '~/lib/tools';
import type { SessionAgent } from '~/lib/agent';
import { NO_ATTACHMENTS, withAttachments } from '~/server/harness/core/attachments-prompt';
import { requestTokens } from '~/server/harness/core/compaction';
import { type RequestSettings, SYSTEM_PROMPT, buildRequest } from '~/server/harness/core/context';
import { ModelError, type ModelTurn } from '~/server/harness/core/model-client';
import { afterModelFailure } from '~/server/harness/core/retry-policy';
import { SESSION_EVENTS_TOOL } from '~/server/harness/core/session-events';
import { delegates, delegationTools } from '~/server/harness/core/delegation';
import { callsTools, interruptedTurnEvents, turnEvents } from '~/server/harness/core/turn-events';
import { budgetStop } from '~/server/harness/steps/budget-gate';
import { compact } from '~/server/harness/steps/compaction';
import { mcpListing, needsMcpListing } from '~/server/harness/steps/mcp-listing';
import { StepAbort } from '~/server/harness/steps/step-abort';
import { type StepContext, handScope } from '~/server/harness/steps/step-context';
import { logger } from '~/server/log';
import { metrics } from '~/server/metrics/metrics';
import { traceModelRequest } from '~/server/metrics/tracing';
import { sleep } from '~/lib/sleep';

const log = logger('harness');

/** What of its log a session's model sees (its agent's policy; none: all of it). */
export function policyOf(agent: SessionAgent | null): ContextPolicy {
  return agent?.context_policy ?? FULL_CONTEXT;
}

/**
 * One model turn: the request built from the view, its span started, the answer streamed to live
 * subscribers, then the whole turn stored as one batch. `markRunning`: the session is not running
 * yet; its status is stored before anything else this step stores.
 */
export async function modelTurn(ctx: StepContext, action: { attempt: number }, markRunning = false): Promise<void> {
  const { view, write } = ctx;
  const { model, live } = ctx.deps;
  const { events } = view;
  const running: NewEvent[] = markRunning ? [{ type: 'session.status_running' }] : [];
  // A session runs the agent version it was created with; one without is on the built-in default.
  // Read before the span starts, so a failed read leaves no half-begun turn behind.
  const agent = await ctx.agent();
  if (await budgetStop(ctx, agent && !model.isDemo ? agent.model.id : model.model, running)) return;
  // Its MCP servers' tools are listed before its first request (a step of its own).
  if (needsMcpListing(ctx, agent) && running.length > 0) await write.once(running.splice(0));
  const mcpListed = await mcpListing(ctx, agent);
  if (mcpListed === null) return;
  const mcpTools = new Map(agent ? mcpToolsFor(agent.tools, mcpListed).map((t) => [t.spec.name, t]) : []);
  // The span names what is asked: the agent's model, or the demo brain's label (never mistaken for Claude).
  const asked = agent && !model.isDemo ? agent.model.id : null;
  // What of the log the model sees; the recall tool comes with every policy that leaves something out.
  const history = policyOf(agent);
  const delegation = ctx.thread !== undefined && delegates(ctx.thread.delegation);
  const { attachments } = ctx.deps;
  const attached = attachments ? await ctx.read('attachments', () => attachments(ctx.sessionId)) : NO_ATTACHMENTS;
  const settings: RequestSettings = {
    model: asked ?? model.model,
    maxTokens: ctx.deps.maxTokens ?? 8192,
    system: withAttachments(agent?.system ?? SYSTEM_PROMPT, attached),
    tools: [...(agent ? toolSpecsFor(agent.tools, mcpListed) : BRAIN_TOOLS), ...(offersRecall(history) ? [SESSION_EVENTS_TOOL] : []), ...(delegation && ctx.thread ? delegationTools(ctx.thread.delegation) : [])],
    history,
    tokenScale: view.fold.scale.value,
  };
  // Near its budget, the context is compacted first (a step of its own); the next step asks the model.
  if (history.type === 'compaction' && (await compact(ctx, events, settings, history.trigger_input_tokens))) return;
  const { request, windowFrom } = buildRequest(events, settings);
  // Where a window began is recorded: the next request's window starts there, and a wake reads from there.
  // The span starts only if the log still ends where the request's view ends: decide() counts
  // every event before a span start as seen by its request, so a message that arrived while the
  // request was built (it would get a seq before the start without being in the request) sends
  // the loop back to read it and build again.
  const stored = await write.ifLogEndsAt(view.lastSeq, [
    ...running,
    { type: 'span.model_request_start', model: asked ?? model.label, estimated_input_tokens: requestTokens(request), ...(windowFrom !== null ? { window_from_seq: windowFrom } : {}) },
  ]);
  if (stored === null) return;
  const start = stored.at(-1);
  if (!start) throw new Error('span start not stored');
  // Named now, so a live preview carries the id the finished event is stored under.
  const messageId = newId('sevt');
  const thinkingId = newId('sevt');
  const began = performance.now();
  const spanEnd = (extra: Partial<Extract<NewEvent, { type: 'span.model_request_end' }>>): NewEvent => ({
    type: 'span.model_request_end',
    model_request_start_id: start.id,
    is_error: true,
    model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    duration_ms: Math.round(performance.now() - began),
    ...extra,
  });

  // The text as it streams, by block: an interrupt keeps what the reader already saw.
  const streamed = new Map<number, string>();
  let outcome: ModelTurn | StepAbort;
  try {
    outcome = await ctx.interruptible((signal) =>
      model.stream(request, {
        signal,
        onDelta: (d) => {
          if (d.kind === 'text') streamed.set(d.index, (streamed.get(d.index) ?? '') + d.text);
          live.publish({ ...d, session_id: ctx.sessionId, model_request_start_id: start.id, ...(d.kind === 'text' ? { event_id: messageId } : d.kind === 'thinking' ? { event_id: thinkingId } : {}) });
        },
      }),
    );
  } catch (e) {
    if (!(e instanceof ModelError)) throw e;
    metrics().modelDuration.observe({ model: settings.model, outcome: 'error' }, (performance.now() - began) / 1000);
    traceModelRequest({ sessionId: ctx.sessionId, model: settings.model, startMs: began, outcome: 'error' });
    await modelFailed(ctx, e, action.attempt, spanEnd({}));
    return;
  }
  if (outcome instanceof StepAbort) {
    metrics().modelDuration.observe({ model: settings.model, outcome: 'interrupted' }, (performance.now() - began) / 1000);
    traceModelRequest({ sessionId: ctx.sessionId, model: settings.model, startMs: began, outcome: 'interrupted' });
    // Interrupted: the text streamed so far is stored as an answer marked interrupted, and the span closed.
    const text = [...streamed.entries()].sort(([a], [b]) => a - b).map(([, t]) => t).join('\n\n');
    const { events: batch, ids } = interruptedTurnEvents(text, messageId, spanEnd({ model_stop_reason: 'interrupted' }));
    await write.keyed('store interrupted turn', batch, `turn:${start.id}`, ids);
    return;
  }
  const turn = outcome;
  observeTurn(settings.model, turn, (performance.now() - began) / 1000);
  traceModelRequest({ sessionId: ctx.sessionId, model: settings.model, startMs: began, outcome: 'ok', ttftMs: turn.ttftMs, usage: turn.usage });
  // A self-hosted session's hand tools go to its worker, never to a hand of this server.
  const selfHosted = ctx.deps.selfHosted;
  const worker = callsTools(turn) && selfHosted ? (await ctx.read('read environment', () => selfHosted.environmentOf(ctx.sessionId))) !== null : false;
  const currentHand = callsTools(turn) && !worker ? await ctx.read('read hands', () => ctx.deps.hands.peekCurrent(handScope(ctx, ctx.loopSignal))) : null;
  const end = spanEnd({ is_error: false, model_usage: turn.usage, ttft_ms: turn.ttftMs === null ? null : Math.round(turn.ttftMs * 10) / 10, model_stop_reason: turn.stopReason });
  const { events: batch, ids } = turnEvents(turn, { tools: agent?.tools ?? null, mcpTools, recall: offersRecall(history), delegation, currentHand, selfHosted: worker, messageId, thinkingId }, end);
  // One atomic batch: a crash leaves either the whole turn or none of it. Keyed, so it is retried
  // in place across a store outage: the answer already streamed is kept, not asked for again.
  await write.keyed('store turn', batch, `turn:${start.id}`, ids);
}

/** A failed request: rescheduled with its back-off (an interrupt ends the wait), or given up. */
async function modelFailed(ctx: StepContext, e: ModelError, attempt: number, end: NewEvent): Promise<void> {
  log.warn('model request failed', { session: ctx.sessionId, attempt, status: e.status, retryable: e.retryable });
  const { events, retryInMs } = afterModelFailure(e, attempt, end, ctx.deps.retry);
  await ctx.write.once(events);
  // An interrupt during the back-off ends the wait; the next decide() sees it.
  if (retryInMs !== null) await ctx.interruptible((signal) => sleep(retryInMs, signal));
}

/** A finished model request in the metrics: its latencies and its tokens by kind. */
function observeTurn(model: string, turn: ModelTurn, seconds: number): void {
  const m = metrics();
  m.modelDuration.observe({ model, outcome: 'ok' }, seconds);
  if (turn.ttftMs !== null) m.ttft.observe({ model }, turn.ttftMs / 1000);
  m.tokens.inc({ kind: 'input' }, turn.usage.input_tokens);
  m.tokens.inc({ kind: 'output' }, turn.usage.output_tokens);
  m.tokens.inc({ kind: 'cache_read' }, turn.usage.cache_read_input_tokens ?? 0);
  m.tokens.inc({ kind: 'cache_write' }, turn.usage.cache_creation_input_tokens ?? 0);
}
