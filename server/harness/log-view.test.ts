import { describe, expect, it } from 'vitest';
import { type ContextPolicy, normalizeContextPolicy } from '~/lib/context-policy';
import type { StoredEvent } from '~/lib/events';
import type { ToolSpec } from '~/lib/hand';
import { mulberry32 } from '~/lib/prng';
import { requestTokens, tokenScale } from '~/server/harness/core/compaction';
import { type RequestSettings, buildRequest } from '~/server/harness/core/context';
import { decide, decideFrom, foldLog } from '~/server/harness/core/decide';
import { FOLD_VERSION, LogFold } from '~/server/harness/core/log-fold';
import { LogView } from '~/server/harness/log-view';
import { Log, USAGE } from '~/server/harness/testing/log-builder';
import type { Checkpoint, EventSlice } from '~/server/session/store';

const TOOLS: ToolSpec[] = [{ name: 'bash', description: 'Run a command.', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }];
const settingsFor = (history: ContextPolicy, scale: number): RequestSettings => ({ model: 'claude-test', maxTokens: 1024, system: 'You are a test agent.', tools: TOOLS, history, tokenScale: scale });

const POLICIES: ContextPolicy[] = [
  normalizeContextPolicy({ type: 'full' }),
  normalizeContextPolicy({ type: 'window', max_input_tokens: 3_000 }),
  normalizeContextPolicy({ type: 'clear_old_tool_results', keep_recent: 2, clear_batch: 3 }),
  normalizeContextPolicy({ type: 'compaction', trigger_input_tokens: 3_000 }),
];

/**
 * A session as a harness under `policy` writes it, with everything decide() and the context
 * builder look at: MCP listing, messages sent mid-turn, calls that ask (allowed, denied, given up),
 * custom calls, interrupts, failed and retried requests, lost hands, compactions. Each request's
 * span start records its estimate and where its window began, built from the whole log so far.
 */
function randomSession(policy: ContextPolicy, seed: number, requests: number): Log {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const log = new Log();
  log.user(`The task (seed ${seed}): remember the code ${seed * 7}.`);
  if (seed % 2 === 1) log.add({ type: 'mcp.tools_listed', servers: [{ mcp_server_name: 'docs', tools: [{ name: 'search', description: 'Search.', input_schema: { type: 'object' } }] }] });
  log.add({ type: 'session.status_running' });
  let open: StoredEvent[] = [];
  let n = 0;
  for (let r = 0; r < requests; r++) {
    // Answer what the last turn asked for.
    for (const call of open) {
      const roll = rnd();
      if (call.type === 'agent.custom_tool_use') {
        if (roll < 0.7) log.add({ type: 'user.custom_tool_result', custom_tool_use_id: call.id, content: [{ type: 'text', text: `custom ${n}` }] });
        continue;
      }
      if (call.type === 'agent.tool_use' && call.evaluated_permission === 'ask') log.add({ type: 'user.tool_confirmation', tool_use_id: call.id, result: roll < 0.6 ? 'allow' : 'deny' });
      if (roll < 0.05) log.add({ type: 'hand.lost', hand: 'sandbox-1', reason: 'the sandbox died' });
      log.result(call, `output ${n++} ${'x'.repeat(Math.floor(rnd() * 900))}`, { isError: roll < 0.1 ? true : undefined });
    }
    open = [];
    const roll = rnd();
    if (roll < 0.12) log.user(`Another thing ${n++}: ${'y'.repeat(Math.floor(rnd() * 400))}`);
    else if (roll < 0.15) log.add({ type: 'user.interrupt' });
    if (rnd() < 0.05) log.add({ type: 'user.file_edit', hand: 'sandbox-1', path: 'notes.md', content: `edit ${n++}` });
    const view = log.events;
    const scale = tokenScale(view);
    const settings = settingsFor(policy, scale);
    const { request, windowFrom } = buildRequest(view, settings);
    if (policy.type === 'compaction' && requestTokens(request) * scale > policy.trigger_input_tokens && view.at(-1)?.type !== 'agent.thread_context_compacted') {
      log.add({ type: 'agent.thread_context_compacted', summary: `Summary up to ${view.at(-1)!.seq}: code ${seed * 7}.`, from_seq: 1, to_seq: view.at(-1)!.seq, model_usage: USAGE });
      continue;
    }
    const start = log.add({ type: 'span.model_request_start', model: 'claude-test', estimated_input_tokens: requestTokens(request), ...(windowFrom !== null ? { window_from_seq: windowFrom } : {}) });
    if (rnd() < 0.08) log.user(`Sent while the model wrote ${n++}.`);
    if (rnd() < 0.08) {
      log.spanEnd(start, true);
      log.add({ type: 'session.status_rescheduled', attempt: 1, retry_in_ms: 10 });
      continue;
    }
    log.say(`Answer ${n++}: ${'z'.repeat(Math.floor(rnd() * 300))}`);
    const calls = Math.floor(rnd() * 3);
    for (let c = 0; c < calls; c++) {
      const kind = pick(['allow', 'allow', 'ask', 'deny', 'custom'] as const);
      if (kind === 'custom') open.push(log.add({ type: 'agent.custom_tool_use', name: 'lookup', input: { q: n }, model_tool_use_id: `toolu_c${n++}` }));
      else open.push(log.add({ type: 'agent.tool_use', name: 'bash', input: { command: `step ${n}` }, model_tool_use_id: `toolu_${n++}`, hand: 'sandbox-1', evaluated_permission: kind }));
    }
    log.add({ type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: { ...USAGE, input_tokens: Math.round(requestTokens(request) * (1 + rnd())) } });
    if (calls === 0) log.add({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
  }
  return log;
}

/** The two reads a view makes, over a log in memory: a checkpoint and slices. Counts the events it hands out. */
function memoryStore(events: readonly StoredEvent[], checkpoint: Checkpoint | null) {
  const reads = { events: 0 };
  return {
    reads,
    readCheckpoint: () => Promise.resolve(checkpoint),
    getEvents: (_id: string, slice: EventSlice = {}) => {
      const out = events.filter((e) => e.seq >= (slice.from ?? 1) && e.seq <= (slice.to ?? Infinity));
      reads.events += out.length;
      return Promise.resolve(out);
    },
  };
}

const checkpointAt = (events: readonly StoredEvent[], seq: number): Checkpoint => {
  const fold = new LogFold();
  for (const e of events.slice(0, seq)) fold.apply(e);
  return { seq, body: JSON.stringify(fold.snapshot()) };
};

describe('a wake from a checkpoint', () => {
  for (const policy of POLICIES) {
    it(`decides and builds the request the whole log gives, from the checkpoint and the parts it shows (${policy.type})`, async () => {
      for (const seed of [1, 2, 3]) {
        const log = randomSession(policy, seed, 120);
        const all = log.events;
        const rnd = mulberry32(seed * 31);
        for (let k = 0; k < 60; k++) {
          const cut = 2 + Math.floor(rnd() * (all.length - 2));
          const prefix = all.slice(0, cut);
          // Half the checkpoints just before the cut: a call that asks, a span still open, are then in the checkpoint.
          const at = rnd() < 0.5 ? Math.max(0, cut - 1 - Math.floor(rnd() * 6)) : Math.floor(rnd() * cut);
          const store = memoryStore(prefix, at > 0 ? checkpointAt(all, at) : null);
          const view = await LogView.load(store, 'sesn_test', policy);
          const where = `seed ${seed}, log of ${cut}, checkpoint at ${at}`;
          expect(view.lastSeq, where).toBe(cut);
          expect(view.fold.state(), where).toEqual(foldLog(prefix));
          expect(decideFrom(view.fold.state()), where).toEqual(decide(prefix));
          expect(view.fold.scale.value, where).toBe(tokenScale(prefix));
          // The MCP listing stays in view, so the harness never lists the tools twice.
          expect(view.mcpListing, where).toEqual(prefix.find((e) => e.type === 'mcp.tools_listed')?.servers ?? null);
          const settings = settingsFor(policy, view.fold.scale.value);
          expect(buildRequest(view.events, settings), where).toEqual(buildRequest(prefix, settings));
          // A run goes on from the view: events it reads next are folded in, and the request still matches.
          const more = all.slice(cut, cut + 40);
          view.append(more);
          const longer = all.slice(0, cut + more.length);
          expect(decideFrom(view.fold.state()), where).toEqual(decide(longer));
          expect(buildRequest(view.events, settings), where).toEqual(buildRequest(longer, settings));
        }
      }
    });
  }

  it('reads only the task and the window of a long windowed session, and only what follows the summary of a compacted one', async () => {
    for (const policy of [POLICIES[1]!, POLICIES[3]!]) {
      const all = randomSession(policy, 9, 400).events;
      const store = memoryStore(all, checkpointAt(all, all.length - 3));
      const view = await LogView.load(store, 'sesn_test', policy);
      expect(view.lastSeq).toBe(all.length);
      // A few hundred events of a log of over a thousand (the window's budget is 3,000 tokens).
      expect(all.length).toBeGreaterThan(1_000);
      expect(store.reads.events, policy.type).toBeLessThan(all.length / 5);
      expect(view.events.length).toBe(store.reads.events);
    }
  });

  it('reads the whole log once when the checkpoint is missing, of another version, or not JSON', async () => {
    const policy = POLICIES[1]!;
    const all = randomSession(policy, 4, 200).events;
    const good = checkpointAt(all, all.length - 1);
    for (const body of [null, good.body.replace(`"v":${FOLD_VERSION}`, `"v":${FOLD_VERSION + 1}`), 'not json {']) {
      const store = memoryStore(all, body === null ? null : { seq: good.seq, body });
      const view = await LogView.load(store, 'sesn_test', policy);
      expect(store.reads.events).toBe(all.length);
      expect(view.fold.state()).toEqual(foldLog(all));
    }
    const store = memoryStore(all, good);
    await LogView.load(store, 'sesn_test', policy);
    expect(store.reads.events).toBeLessThan(all.length / 2);
  });

  it('refuses to fold a log read with a gap', () => {
    const all = randomSession(POLICIES[0]!, 5, 10).events;
    const fold = new LogFold();
    fold.apply(all[0]!);
    expect(() => fold.apply(all[2]!)).toThrow(/event 3 follows 1/);
  });

  it('keeps memory bounded over a long run: what the window left behind is dropped from the view', () => {
    const policy = POLICIES[1]!;
    const all = randomSession(policy, 6, 400).events;
    const view = LogView.of(all, policy);
    expect(view.events.length).toBeLessThan(all.length / 5);
    expect(buildRequest(view.events, settingsFor(policy, view.fold.scale.value))).toEqual(buildRequest(all, settingsFor(policy, tokenScale(all))));
  });
});
