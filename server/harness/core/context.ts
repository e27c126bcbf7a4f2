import type Anthropic from '@anthropic-ai/sdk';
import type { StoredEvent } from '~/lib/events';
import { type ToolSpec, lostHandText } from '~/lib/hand';
import { type ContextPolicy, FULL_CONTEXT, estimateTokens } from '~/lib/context-policy';
import { mcpToolName } from '~/lib/mcp-tools';
import { RECALL_HINT, shapeHistory } from '~/server/harness/core/context-shape';
import { outcomeBlocks } from '~/server/harness/core/outcome-context';

type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;
type ToolResultBlockParam = Anthropic.Messages.ToolResultBlockParam;

export interface RequestSettings {
  model: string;
  maxTokens: number;
  system: string;
  tools: readonly ToolSpec[];
  /** What of the log the model sees (the agent's `context_policy`); default: all of it. */
  history?: ContextPolicy;
  /** Real tokens per estimated token in this session (compaction.ts `tokenScale`); default 1. */
  tokenScale?: number;
}

export type ModelRequest = Anthropic.Messages.MessageCreateParamsNonStreaming;

const EPHEMERAL = { type: 'ephemeral' } as const;

/** What follows an answer the user interrupted, in the model's view. */
export const INTERRUPTED_NOTE = Object.freeze({ type: 'text', text: '[The user interrupted this answer here.]' } as const);

/**
 * Builds the Messages API request from the log. Pure and deterministic: the same events give
 * byte-identical requests, and appending events only appends to `messages`, so the prefix
 * (tools, then system, then history) stays stable and prompt caching keeps hitting.
 */
export function buildContext(events: readonly StoredEvent[], policy: RequestSettings): ModelRequest {
  return buildRequest(events, policy).request;
}

/** `buildContext`, and where its window began when it left turns out (its span start records it). */
export function buildRequest(events: readonly StoredEvent[], policy: RequestSettings): { request: ModelRequest; windowFrom: number | null } {
  const fixedTokens = estimateTokens(policy.system) + estimateTokens(JSON.stringify(policy.tools));
  const shaped = shapeHistory(events, policy.history ?? FULL_CONTEXT, fixedTokens, policy.tokenScale ?? 1);
  const modelToolIds = new Map<string, string>();
  const answered = new Set<string>();
  const messages: MessageParam[] = [];

  const push = (role: 'user' | 'assistant', blocks: readonly ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else messages.push({ role, content: [...blocks] });
  };
  // A client's system.message: a `role: "system"` turn of its own (text only).
  const pushSystem = (blocks: readonly Anthropic.Messages.TextBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === 'system' && Array.isArray(last.content)) last.content.push(...blocks);
    else messages.push({ role: 'system', content: [...blocks] });
  };

  // Custom tool calls the client has not answered: a new message (or an interrupt) gives them up.
  const unansweredCustom: string[] = [];
  const giveUpCustom = () => {
    for (const id of unansweredCustom.splice(0)) {
      if (answered.has(id)) continue;
      answered.add(id);
      push('user', [{ type: 'tool_result', tool_use_id: id, is_error: true, content: [{ type: 'text', text: 'The client did not answer this tool call.' }] }]);
    }
  };

  // What the user says while a model request runs is stored inside its span, but the model did not
  // see it: it goes after that turn's output, so the request never ends on the assistant's answer
  // (a prefill it would only continue) and the message gets the answer of its own turn.
  let requestOpen = false;
  const heldBack: StoredEvent[] = [];

  const add = (e: StoredEvent) => {
    switch (e.type) {
      case 'span.model_request_start':
        requestOpen = true;
        break;
      case 'span.model_request_end':
        requestOpen = false;
        for (const held of heldBack.splice(0)) add(held);
        break;
      case 'user.interrupt':
        giveUpCustom();
        break;
      case 'agent.thread_message_received':
      case 'user.message':
        if (requestOpen) {
          heldBack.push(e);
          break;
        }
        giveUpCustom();
        push(
          'user',
          blocksOf(e, () => [...threadMessageIntro(e), ...e.content.flatMap((b): ContentBlockParam[] => {
            switch (b.type) {
              case 'text':
                return hasText(b.text) ? [{ type: 'text', text: b.text }] : [];
              case 'image':
                return [{ type: 'image', source: b.source.type === 'base64' ? { ...b.source, media_type: b.source.media_type as 'image/png' } : b.source }];
              case 'document':
                return [{ type: 'document', source: b.source, ...(b.title ? { title: b.title } : {}), ...(b.context ? { context: b.context } : {}) } as ContentBlockParam];
              case 'redacted':
                return [];
            }
          })]),
        );
        break;
      case 'user.define_outcome':
      case 'system.message':
        // Sent beside a user turn: held back with it while a request runs.
        if (requestOpen) {
          heldBack.push(e);
          break;
        }
        if (e.type === 'system.message') pushSystem(e.content.filter((b) => hasText(b.text)).map((b) => ({ type: 'text', text: b.text })));
        else push('user', blocksOf(e, () => outcomeBlocks(e)));
        break;
      case 'span.outcome_evaluation_end':
        push('user', blocksOf(e, () => outcomeBlocks(e)));
        break;
      case 'user.file_edit': {
        if (requestOpen) {
          heldBack.push(e);
          break;
        }
        const shown = e.content.length > 20_000 ? `${e.content.slice(0, 20_000)}\n[… ${e.content.length - 20_000} more characters]` : e.content;
        push('user', [{ type: 'text', text: `[The user edited ${e.path} on hand ${e.hand} in the editor. Its content is now:]\n${shown}` }]);
        break;
      }
      case 'hand.lost':
        // The model must know its workspace went away, also when no call of its own failed on it.
        push('user', [{ type: 'text', text: `[${lostHandText(e.hand, e.reason)}]` }]);
        break;
      case 'agent.thinking':
        push('assistant', blocksOf(e, () => (e.content ?? []).map((b) => ({ type: 'thinking', thinking: b.thinking, signature: b.signature }))));
        break;
      case 'agent.message':
        push(
          'assistant',
          blocksOf(e, () => e.content.flatMap((b): ContentBlockParam[] => (b.type === 'text' && hasText(b.text) ? [{ type: 'text', text: b.text }] : []))),
        );
        // A cut answer: the model is told where it stopped and why, so it neither repeats it nor
        // takes it for finished (and the request never ends on its own half-sentence).
        if (e.interrupted) push('user', [INTERRUPTED_NOTE]);
        break;
      case 'agent.tool_use':
        modelToolIds.set(e.id, e.model_tool_use_id);
        push('assistant', blocksOf(e, () => [{ type: 'tool_use', id: e.model_tool_use_id, name: e.name, input: e.input }]));
        break;
      case 'agent.mcp_tool_use':
        // The model called it under its full name: shown back the same way.
        modelToolIds.set(e.id, e.model_tool_use_id);
        push('assistant', blocksOf(e, () => [{ type: 'tool_use', id: e.model_tool_use_id, name: mcpToolName(e.mcp_server_name, e.name), input: e.input }]));
        break;
      case 'agent.custom_tool_use':
        modelToolIds.set(e.id, e.model_tool_use_id);
        unansweredCustom.push(e.model_tool_use_id);
        push('assistant', blocksOf(e, () => [{ type: 'tool_use', id: e.model_tool_use_id, name: e.name, input: e.input }]));
        break;
      case 'agent.tool_result':
      case 'user.tool_result':
      case 'user.custom_tool_result':
      case 'agent.mcp_tool_result': {
        const id = modelToolIds.get(e.type === 'user.custom_tool_result' ? e.custom_tool_use_id : e.type === 'agent.mcp_tool_result' ? e.mcp_tool_use_id : e.tool_use_id);
        // A result for a call this history never made, or a second (late) one: the API takes
        // exactly one result per call, the first stored.
        if (!id || answered.has(id)) break;
        answered.add(id);
        const result = (content: ToolResultBlockParam['content']): ToolResultBlockParam => ({ type: 'tool_result', tool_use_id: id, content, ...(e.is_error ? { is_error: true } : {}) });
        if (shaped.cleared.has(e.id)) push('user', [result([{ type: 'text', text: `[Output left out of this context (event ${e.seq}); ${RECALL_HINT}.]` }])]);
        // The call's model id is the call's, which never changes: the block is the event's alone.
        else push('user', blocksOf(e, () => [result((e.content ?? []).filter((c) => c.type !== 'text' || hasText(c.text)) as Exclude<ToolResultBlockParam['content'], string | undefined>)]));
        break;
      }
      default:
        break;
    }
  };
  const { note } = shaped;
  if (note?.afterSeq === null) push('user', [{ type: 'text', text: note.text }]);
  for (const e of shaped.events) {
    add(e);
    if (note && note.afterSeq === e.seq) push('user', [{ type: 'text', text: note.text }]);
  }
  // A request cut off before its end was stored (a crash): what arrived during it follows it.
  requestOpen = false;
  for (const held of heldBack.splice(0)) add(held);

  // The API wants a user turn's tool_result blocks before any other content in it.
  for (const m of messages) {
    if (m.role === 'user' && Array.isArray(m.content)) {
      m.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
    }
  }
  markLastUserBlock(messages);

  const tools = policy.tools.map((t, i) => ({
    name: t.name,
    description: t.description,
    input_schema: t.input_schema,
    ...(i === policy.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
  })) as Anthropic.Messages.Tool[];

  const request: ModelRequest = {
    model: policy.model,
    max_tokens: policy.maxTokens,
    system: [{ type: 'text', text: policy.system, cache_control: EPHEMERAL }],
    tools,
    messages,
  };
  return { request, windowFrom: shaped.windowFrom ?? null };
}

/** Who a message from another thread comes from (multiagent): the model reads it as that agent's words, not the user's. */
function threadMessageIntro(e: StoredEvent): ContentBlockParam[] {
  if (e.type !== 'agent.thread_message_received') return [];
  const who = e.from_agent_name ? `${e.from_agent_name} (thread ${e.from_session_thread_id})` : `thread ${e.from_session_thread_id}`;
  return [{ type: 'text', text: `[Message from ${who}:]` }];
}

/** The API rejects empty and whitespace-only text blocks. */
function hasText(text: string): boolean {
  return /\S/.test(text);
}

/**
 * A stored event never changes: its blocks are made once and shared, frozen, by every request
 * built from it (a long session's request is rebuilt for every turn). Requests are read, never
 * changed in place (markLastUserBlock puts a copy in its message).
 */
const madeBlocks = new WeakMap<StoredEvent, readonly ContentBlockParam[]>();
function blocksOf(e: StoredEvent, make: () => ContentBlockParam[]): readonly ContentBlockParam[] {
  let blocks = madeBlocks.get(e);
  if (!blocks) {
    blocks = Object.freeze(make().map((b) => Object.freeze(b)));
    madeBlocks.set(e, blocks);
  }
  return blocks;
}

/** Cache breakpoint on the newest user content: the next turn reads everything before it. */
function markLastUserBlock(messages: MessageParam[]): void {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user' || !Array.isArray(m.content) || m.content.length === 0) continue;
    const lastIdx = m.content.length - 1;
    const block = m.content[lastIdx]!;
    if (block.type === 'text' || block.type === 'tool_result' || block.type === 'image' || block.type === 'document') {
      m.content[lastIdx] = { ...block, cache_control: EPHEMERAL };
    }
    return;
  }
}

export const SYSTEM_PROMPT = `You are an agent running inside Paddock, a platform for long-running work.
Your session is a durable event log: you may be paused, moved to another server or resumed after a crash, and nothing you did is lost.
You act through tools that run in a "hand" (an execution environment with a workspace folder). Hands are disposable: if one is lost, a tool call returns an error and a fresh hand is provided on the next call.
Work step by step, check results, and say clearly when you are done.`;
