import 'server-only';
import { z } from 'zod';
import { type StoredEvent, describeZodError } from '~/lib/events';
import { type HandKind, ToolError, lostHandText } from '~/lib/hand';
import { isHandTool } from '~/lib/tools';
import { type AgentTool, toolsetConfig } from '~/lib/toolset';
import type { HandResources } from '~/server/hands/provisioner';
import type { HandEntry, HandRegistry, HandScope } from '~/server/hands/registry';
import type { ToolUse } from '~/server/harness/core/decide';
import { SESSION_EVENTS_TOOL_NAME, sessionEvents } from '~/server/harness/core/session-events';
import { webFetch } from '~/server/harness/web-fetch';

/** A failed call, remembering which hand it ran on so the result can say so. */
export class CallFailure extends Error {
  constructor(
    message: string,
    readonly hand: string,
  ) {
    super(message);
    this.name = 'CallFailure';
  }
}

const HAND_KINDS: readonly HandKind[] = ['sandbox', 'memory', 'remote', 'local', 'browser'];
function isHandKind(k: string): k is HandKind {
  return (HAND_KINDS as readonly string[]).includes(k);
}

const Resources = z.object({ memory_mb: z.number().int().min(16).optional(), cpu_seconds: z.number().int().min(1).optional() }).strict();

function parseResources(raw: unknown): HandResources | undefined {
  if (raw === undefined) return undefined;
  const r = Resources.safeParse(raw);
  if (!r.success) throw new ToolError(`provision: invalid resources: ${describeZodError(r.error)}`);
  return r.data;
}

function formatHands(entries: HandEntry[]): string {
  if (entries.length === 0) return 'no hands yet: the first tool call provisions one';
  const current = [...entries].reverse().find((e) => e.status === 'ready' || e.status === 'suspended');
  return entries
    .map((e) => {
      const age = Math.round((Date.now() - e.startedAt) / 1000);
      const status = e.status === 'suspended' ? 'ready (suspended: resumes on the next call, files kept)' : e.status;
      return `${e.id}\t${e.kind}\t${status}${e.reason ? ` (${e.reason})` : ''}\t${age}s${e === current ? '\t(current)' : ''}`;
    })
    .join('\n');
}

/** What a call runs under besides its hands: the session's agent tools and its log (web_fetch reads both). */
export interface CallContext {
  /** The session's agent's tools; null for a session without an agent (no web_fetch). */
  tools: readonly AgentTool[] | null;
  /** The session's whole log up to this step (read only by the calls that need it: web_fetch, session_events). */
  log: () => Promise<readonly StoredEvent[]>;
  /** Whether the session's agent has the `session_events` tool (a context policy other than `full`). */
  recall?: boolean;
}
const NO_CONTEXT: CallContext = { tools: null, log: () => Promise.resolve([]) };

/**
 * One tool call: a hand-management tool, web_fetch (run here, on no hand), or a hand tool routed
 * to its hand. A failure throws (the harness stores it as an error result).
 */
export async function runToolCall(hands: HandRegistry, scope: HandScope, call: ToolUse, signal: AbortSignal, ctx: CallContext = NO_CONTEXT): Promise<{ text: string; hand?: string }> {
  if (call.type === 'agent.mcp_tool_use') throw new ToolError(`${call.name} is a tool of MCP server ${call.mcp_server_name}: it runs through the MCP gateway, never on a hand`);
  const { hand: requested, ...input } = call.input;
  // A call addressed to a browser hand at turn time stays there: its tabs already saw it. Any
  // other addressed hand keeps the call while it is ready (a re-attached remote hand collects
  // a call that was in flight when the last harness died); else the call goes to the current one.
  const addressed = call.hand?.startsWith('browser-') || (call.hand && (await hands.isReady(scope, call.hand))) ? call.hand : undefined;
  const named = typeof requested === 'string' && requested.length > 0 ? requested : addressed;
  switch (call.name) {
    case 'provision': {
      const kind = typeof input.kind === 'string' ? input.kind : hands.defaultKind;
      if (!isHandKind(kind)) throw new ToolError(`provision: unknown kind ${kind} (sandbox, memory, remote, local)`);
      const endpoint = typeof input.endpoint === 'string' ? input.endpoint : undefined;
      const resources = parseResources(input.resources);
      const e = await hands.provision(scope, { kind, ...(endpoint ? { endpoint } : {}), ...(resources ? { resources } : {}) });
      return { text: `provisioned ${e.id} (${e.kind}); it is now the current hand`, hand: e.id };
    }
    case 'release': {
      if (!named) throw new ToolError('release: name the hand to release, e.g. {"hand": "sandbox-1"}');
      await hands.release(scope, named);
      return { text: `released ${named}` };
    }
    case 'list_hands':
      return { text: formatHands(await hands.list(scope)) };
    case SESSION_EVENTS_TOOL_NAME:
      // Only offered under a context policy that leaves something out; never a hand's.
      if (!ctx.recall) throw new ToolError('session_events is not a tool of this session (its agent sees its whole log: context_policy full)');
      return { text: sessionEvents(input, await ctx.log()) };
    case 'web_fetch': {
      const config = ctx.tools ? toolsetConfig(ctx.tools, 'web_fetch') : null;
      if (!config?.enabled) throw new ToolError('web_fetch is not a tool of this session (its agent does not enable it)');
      const network = await hands.networkPolicy(scope.sessionId);
      return { text: await webFetch(input, { config, network, events: await ctx.log(), callSeq: call.seq, signal }) };
    }
    default:
      break;
  }
  if (!isHandTool(call.name)) throw new ToolError(`unknown tool ${call.name}`);
  // A call whose hand was lost (its server died mid-command, say) fails naming it: run again on
  // a fresh, empty hand it could do harm (a command not safe to repeat) or mislead the model
  // about its files. The model decides what to do next.
  // A call that named no hand (the session had none) ran on the first one provisioned after it.
  if (!call.hand?.startsWith('browser-')) {
    const addressedTo = call.hand;
    const lost = addressedTo ? await hands.lostReason(scope, addressedTo).then((reason) => (reason === null ? null : { id: addressedTo, reason })) : await hands.lostSince(scope, call.seq);
    if (lost) throw new CallFailure(lostHandText(lost.id, lost.reason), lost.id);
  }
  const entry = await hands.resolve(scope, named);
  try {
    return await hands.use(scope, entry, async (hand) => {
      let lostReason: string | undefined;
      // A hand that dies mid-call fails the call at once, not at its timeout.
      const text = await Promise.race([
        hand.execute(call.name, input, { callId: call.id, signal }).catch((e: unknown) => {
          throw lostReason === undefined ? e : new Error(lostHandText(entry.id, lostReason));
        }),
        hand.lost.then((reason): never => {
          lostReason = reason;
          throw new Error(lostHandText(entry.id, reason));
        }),
      ]);
      return { text, hand: entry.id };
    });
  } catch (e) {
    throw new CallFailure(e instanceof Error ? e.message : String(e), entry.id);
  }
}
