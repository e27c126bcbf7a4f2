import type { NewEvent } from '~/lib/events';
import type { SessionStore } from '~/server/session/store';

// ── event fixtures (all parse-valid per lib/events.ts) ─────────────────────────────────────────
const AGENT_TEXT =
  'I looked at the failing test and the fixture it loads. The parser drops the trailing newline, so the ' +
  'last record is never flushed. I will patch the reader to flush on EOF and re-run the suite to confirm.';
const TOOL_OUTPUT =
  'total 48\ndrwxr-xr-x 5 agent agent 4096 .\n-rw-r--r-- 1 agent agent 1893 package.json\n' +
  '-rw-r--r-- 1 agent agent 7321 reader.ts\n-rw-r--r-- 1 agent agent 2210 reader.test.ts\nexit code: 0';
const USAGE = { input_tokens: 5_210, output_tokens: 184, cache_creation_input_tokens: 0, cache_read_input_tokens: 4_960 };

export const userMessage = (text: string): NewEvent => ({ type: 'user.message', content: [{ type: 'text', text }] });
/** `n` numbers the message, so a long log is not one text repeated. */
export const agentMessage = (n?: number): NewEvent => ({ type: 'agent.message', content: [{ type: 'text', text: n === undefined ? AGENT_TEXT : `(${n}) ${AGENT_TEXT}` }] });
export const spanStart = (): NewEvent => ({ type: 'span.model_request_start', model: 'claude-bench' });
export const spanEnd = (startId: string, stop: string): NewEvent => ({
  type: 'span.model_request_end',
  model_request_start_id: startId,
  is_error: false,
  model_usage: USAGE,
  ttft_ms: 412.5,
  duration_ms: 2_310,
  model_stop_reason: stop,
});

let toolCounter = 0;
export const toolUse = (i: number): NewEvent => ({
  type: 'agent.tool_use',
  name: i % 2 === 0 ? 'bash' : 'read',
  input: i % 2 === 0 ? { command: `ls -la src/module-${i}` } : { path: `src/module-${i}/reader.ts` },
  model_tool_use_id: `toolu_bench${(toolCounter++).toString().padStart(8, '0')}`,
  hand: 'memory-1',
});
export const toolResult = (toolUseId: string): NewEvent => ({
  type: 'agent.tool_result',
  tool_use_id: toolUseId,
  hand: 'memory-1',
  content: [{ type: 'text', text: TOOL_OUTPUT }],
});

/**
 * Builds a realistic `total`-event log. Episodes: user.message → running → (model turn with 1–3
 * tool calls → their results)×k → final answer → idle. Turns and their results are separate
 * batches, so every tool_result and span end points at the real stored id. By default it ends in
 * a `user.message` after the idle, so a wake must mark it running and call the model; `settled`
 * ends it in `session.status_idle` (nothing for a harness to do).
 */
export async function buildLog(store: SessionStore, sessionId: string, total: number, opts: { settled?: boolean } = {}): Promise<void> {
  let written = 0;
  let n = 0;
  const emit = async (events: NewEvent[]) => {
    const stored = await store.emitEvents(sessionId, events);
    written += stored.length;
    return stored;
  };
  const left = () => total - (opts.settled ? 0 : 1) - written; // one event kept for the final user.message
  let episode = 0;
  while (left() >= 6) {
    const [, , start] = await emit([userMessage(`Task ${episode}: fix the reader and re-run the tests.`), { type: 'session.status_running' }, spanStart()]);
    let startId = start!.id;
    const loops = 2 + (episode % 7);
    for (let loop = 0; loop < loops; loop++) {
      let tools = 1 + ((episode + loop) % 3);
      // A loop is 2·tools + 3 events; the episode still needs 3 to end.
      while (tools > 0 && left() - 3 < 2 * tools + 3) tools--;
      if (tools === 0) break;
      const turn = await emit([agentMessage(n++), ...Array.from({ length: tools }, (_, i) => toolUse(loop + i)), spanEnd(startId, 'tool_use')]);
      const uses = turn.filter((e) => e.type === 'agent.tool_use');
      const results = await emit([...uses.map((u) => toolResult(u.id)), spanStart()]);
      startId = results.at(-1)!.id;
    }
    // Too little left for another episode: pad the final turn with extra messages.
    const pad = left() - 3 < 6 ? left() - 3 : 0;
    await emit([agentMessage(n++), ...Array.from({ length: pad }, () => agentMessage(n++)), spanEnd(startId, 'end_turn'), { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null }]);
    episode++;
  }
  if (!opts.settled) await emit([userMessage('One more thing: also add a regression test for the EOF case.')]);
  if (written !== total) throw new Error(`buildLog wrote ${written} events, wanted ${total}`);
}
