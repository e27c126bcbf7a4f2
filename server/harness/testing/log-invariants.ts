import { SIDE_EVENT_TYPES, type StoredEvent } from '~/lib/events';

/**
 * What must hold for any session log the harness wrote, however many harnesses raced on it and
 * however often they crashed. Pure, so the split-brain and chaos tests (and anyone debugging a
 * production log) share one definition of "well-formed". Each violation is one line naming the
 * rule in brackets and the offending seqs and ids.
 *
 * Rules:
 * - [seq] seqs are 1..N in order, one session, event ids unique.
 * - [turn-atomic] agent.message / agent.thinking / agent.tool_use only appear inside a turn batch:
 *   a contiguous run of them directly followed by a successful span.model_request_end, all stored
 *   in one append (same processed_at). A crash leaves the whole turn or none of it. An interrupted
 *   turn's batch is one agent.message marked `interrupted` and its interrupted (error) end.
 * - [span] every span.model_request_end names a span.model_request_start stored before it, each
 *   start has at most one end (no turn stored twice), and an end closes the latest start: a turn
 *   landing after a newer turn began means a writer that lost its lease was still writing.
 * - [span-open] a start without an end (its harness crashed or was fenced off) is superseded by a
 *   later start or a user.interrupt; in an unsettled log the newest start may still be in flight.
 * - [status] a model request starts only while the session is running.
 * - [fork] two successful model turns never answer the same input: between them there is a new
 *   user.message, tool result, file edit or confirmation. Two harnesses both storing an answer
 *   to one context shows up here.
 * - [tool-result] every result names an agent.tool_use stored before it, and no call has two
 *   results; in a settled log every call has exactly one.
 * - [idle] an end_turn idle leaves nothing behind: every call before it has its result, and the
 *   newest user.message before it was answered by a successful turn that started after it (or
 *   was interrupted); a retries_exhausted idle directly follows its session.error.
 * - [hand] no hand name is provisioned twice.
 * - [terminated] session.status_terminated is final: stored once, and nothing but side events
 *   follows it (no input, no status, no turn).
 * - [outcome] an outcome evaluation's end names a start stored before it (same outcome and
 *   iteration), a start is ended at most once, and in a settled log every start has its end; an
 *   evaluation starts only while the session runs.
 * - [settled] a settled log ends in session.status_idle or session.status_terminated (side events
 *   aside: SIDE_EVENT_TYPES).
 */
export interface InvariantOptions {
  /**
   * Whether the log is at rest: every harness is done with it. Then nothing may be in flight (no
   * call without a result, no open turn) and it must end idle. Default true.
   */
  settled?: boolean;
}

const TURN_OUTPUT = new Set<StoredEvent['type']>(['agent.message', 'agent.thinking', 'agent.tool_use', 'agent.mcp_tool_use']);

/** What gives the model something new to answer. */
const INPUT = new Set<StoredEvent['type']>([
  'user.message',
  'user.tool_result',
  'user.custom_tool_result',
  'user.tool_confirmation',
  'user.file_edit',
  'agent.tool_result',
  'agent.mcp_tool_result',
  // An outcome starts work; a verdict asking for revision gives the agent its next turn.
  'user.define_outcome',
  'span.outcome_evaluation_end',
]);

const at = (e: StoredEvent): string => `seq ${e.seq} ${e.type} ${e.id}`;

export function checkLogInvariants(events: readonly StoredEvent[], opts: InvariantOptions = {}): string[] {
  const settled = opts.settled ?? true;
  const violations: string[] = [];
  const fail = (rule: string, message: string) => violations.push(`[${rule}] ${message}`);

  // [seq]: report the first gap only; everything after it would repeat the same news.
  const gap = events.findIndex((e, i) => e.seq !== i + 1);
  if (gap >= 0) fail('seq', `position ${gap + 1} holds ${at(events[gap]!)}; seqs must be contiguous 1..${events.length}`);
  const sessions = new Set(events.map((e) => e.session_id));
  if (sessions.size > 1) fail('seq', `one log holds events of ${sessions.size} sessions: ${[...sessions].join(', ')}`);
  const seenIds = new Map<string, StoredEvent>();
  for (const e of events) {
    const first = seenIds.get(e.id);
    if (first) fail('seq', `event id ${e.id} is stored twice (seq ${first.seq} and seq ${e.seq})`);
    else seenIds.set(e.id, e);
  }

  let status: 'idle' | 'running' | 'rescheduling' | 'terminated' = 'idle';
  const starts = new Map<string, StoredEvent>();
  const endOf = new Map<string, StoredEvent>();
  let latestStart: StoredEvent | null = null;
  let lastTurnEnd: StoredEvent | null = null;
  // Seqs of input events; a successful turn must answer some input stored after the previous
  // successful turn STARTED and before it started itself (input that arrives mid-turn is the
  // next turn's to answer).
  const inputSeqs: number[] = [];
  let answeredBefore = 0;
  const calls = new Map<string, StoredEvent>();
  const resultsOf = new Map<string, StoredEvent[]>();
  /** The newest user.message not yet answered by a turn that started after it. */
  let unanswered: StoredEvent | null = null;
  let lastInterrupt: StoredEvent | null = null;
  const provisioned = new Map<string, StoredEvent>();
  /** Index of the next event not yet covered by a checked turn batch. */
  let batchChecked = 0;

  const evalStarts = new Map<string, StoredEvent & { type: 'span.outcome_evaluation_start' }>();
  const evalEnds = new Map<string, StoredEvent>();
  /** The session.status_terminated, once stored. */
  let ended: StoredEvent | null = null;

  for (const [i, e] of events.entries()) {
    if (INPUT.has(e.type)) inputSeqs.push(e.seq);
    if (ended && !SIDE_EVENT_TYPES.has(e.type)) fail('terminated', `${at(e)} follows ${at(ended)}: a terminated session takes nothing more`);

    if (TURN_OUTPUT.has(e.type) && i >= batchChecked) {
      let j = i;
      while (j < events.length && TURN_OUTPUT.has(events[j]!.type)) j++;
      batchChecked = j;
      const end = events[j];
      // An interrupted turn keeps the text that streamed: one agent.message marked interrupted, then its interrupted end.
      const cut = j === i + 1 && e.type === 'agent.message' && e.interrupted === true && end?.type === 'span.model_request_end' && end.model_stop_reason === 'interrupted';
      if (!end || end.type !== 'span.model_request_end' || (end.is_error && !cut)) {
        fail('turn-atomic', `${at(e)}…seq ${j} are not followed by a successful span.model_request_end (next: ${end ? at(end) : 'end of log'})`);
      } else {
        const split = events.slice(i, j + 1).find((x) => x.processed_at !== e.processed_at);
        if (split) fail('turn-atomic', `turn ${at(e)}…${at(end)} was not stored in one append (${at(split)} has processed_at ${split.processed_at}, not ${e.processed_at})`);
      }
    }

    switch (e.type) {
      case 'span.model_request_start':
        if (status !== 'running') fail('status', `${at(e)} starts a model request while the session is ${status}`);
        starts.set(e.id, e);
        latestStart = e;
        break;
      case 'span.model_request_end': {
        const start = starts.get(e.model_request_start_id);
        if (!start) {
          fail('span', `${at(e)} ends ${e.model_request_start_id}, which is not a span.model_request_start stored before it`);
          break;
        }
        const earlier = endOf.get(start.id);
        if (earlier) {
          fail('span', `${at(start)} is ended twice: ${at(earlier)} and ${at(e)} (a turn stored twice)`);
          break;
        }
        endOf.set(start.id, e);
        if (latestStart && latestStart.id !== start.id) {
          fail('span', `${at(e)} closes ${at(start)} after a newer ${at(latestStart)} began (interleaved turns: a fenced-off writer got through)`);
        }
        if (!e.is_error) {
          if (!inputSeqs.some((q) => q > answeredBefore && q < start.seq)) {
            fail('fork', `${at(e)} answers no new input: the previous successful turn ended at ${lastTurnEnd ? at(lastTurnEnd) : '(none: nothing was asked yet)'}`);
          }
          answeredBefore = start.seq;
          lastTurnEnd = e;
          if (unanswered && start.seq > unanswered.seq) unanswered = null;
        }
        break;
      }
      case 'agent.tool_use':
      case 'agent.mcp_tool_use':
        calls.set(e.id, e);
        break;
      case 'agent.tool_result':
      case 'user.tool_result':
      case 'agent.mcp_tool_result': {
        const id = e.type === 'agent.mcp_tool_result' ? e.mcp_tool_use_id : e.tool_use_id;
        if (!calls.has(id)) fail('tool-result', `${at(e)} answers ${id}, which is not a tool call stored before it`);
        const list = resultsOf.get(id) ?? [];
        list.push(e);
        resultsOf.set(id, list);
        if (list.length === 2) fail('tool-result', `${id} has more than one result: ${list.map(at).join(', ')}`);
        break;
      }
      case 'user.message':
        unanswered = e;
        break;
      case 'user.interrupt':
        unanswered = null;
        lastInterrupt = e;
        break;
      case 'session.status_running':
        status = 'running';
        break;
      case 'session.status_rescheduled':
        status = 'rescheduling';
        break;
      case 'session.status_terminated':
        status = 'terminated';
        ended ??= e;
        break;
      case 'session.status_idle': {
        status = 'idle';
        if (e.stop_reason.type === 'end_turn') {
          const open = [...calls.values()].filter((c) => !resultsOf.has(c.id));
          if (open.length > 0) fail('idle', `${at(e)} idles with calls still unanswered: ${open.map(at).join(', ')}`);
          if (unanswered) fail('idle', `${at(e)} idles over ${at(unanswered)}: no successful model turn started after it`);
        } else if (e.stop_reason.type === 'retries_exhausted') {
          const prev = events[i - 1];
          if (prev?.type !== 'session.error') fail('idle', `${at(e)} (retries_exhausted) does not directly follow a session.error`);
          unanswered = null; // given up on, and reported as such
        }
        break;
      }
      case 'span.outcome_evaluation_start':
        if (status !== 'running') fail('outcome', `${at(e)} starts an evaluation while the session is ${status}`);
        evalStarts.set(e.id, e);
        break;
      case 'span.outcome_evaluation_end': {
        const start = evalStarts.get(e.outcome_evaluation_start_id);
        if (!start || start.outcome_id !== e.outcome_id || start.iteration !== e.iteration) {
          fail('outcome', `${at(e)} ends ${e.outcome_evaluation_start_id}, which is not an evaluation start of ${e.outcome_id} iteration ${e.iteration} stored before it`);
          break;
        }
        const earlier = evalEnds.get(start.id);
        if (earlier) fail('outcome', `${at(start)} is ended twice: ${at(earlier)} and ${at(e)} (a verdict counted twice)`);
        else evalEnds.set(start.id, e);
        break;
      }
      case 'hand.provisioned': {
        const first = provisioned.get(e.hand);
        if (first) fail('hand', `hand ${e.hand} is provisioned twice: ${at(first)} and ${at(e)}`);
        else provisioned.set(e.hand, e);
        break;
      }
      default:
        break;
    }
  }

  // [span-open]: an open start is fine once someone asked again, or the user stopped the turn.
  for (const start of starts.values()) {
    if (endOf.has(start.id)) continue;
    const superseded = latestStart !== null && latestStart.id !== start.id;
    const interrupted = lastInterrupt !== null && lastInterrupt.seq > start.seq;
    const inFlight = !settled && latestStart?.id === start.id;
    if (!superseded && !interrupted && !inFlight) fail('span-open', `${at(start)} never ended and no later turn replaced it`);
  }

  if (settled) {
    for (const c of calls.values()) {
      if (!resultsOf.has(c.id)) fail('tool-result', `${at(c)} has no result in a settled log`);
    }
    for (const start of evalStarts.values()) {
      if (!evalEnds.has(start.id)) fail('outcome', `${at(start)} has no end in a settled log`);
    }
    // Side events (a tab attached, a file edited) may follow: they ask nothing of the harness.
    const last = events.findLast((e) => !SIDE_EVENT_TYPES.has(e.type));
    if (last && last.type !== 'session.status_idle' && last.type !== 'session.status_terminated') fail('settled', `the log ends in ${at(last)}, not session.status_idle (or terminated)`);
  }
  return violations;
}

/**
 * The rules per thread (multiagent): the whole log's seqs are checked as one, then each thread's
 * own events (the primary's: those without `session_thread_id`) as a log of its own, a child's
 * statuses read as a session's and a message from another thread as a user's message. So each
 * thread's turns are atomic, never forked, each call answered once, and each ends idle.
 */
export function checkThreadInvariants(events: readonly StoredEvent[], opts: InvariantOptions = {}): string[] {
  const violations: string[] = [];
  const gap = events.findIndex((e, i) => e.seq !== i + 1);
  if (gap >= 0) violations.push(`[seq] position ${gap + 1} holds ${at(events[gap]!)}; seqs must be contiguous 1..${events.length}`);
  const byThread = new Map<string | null, StoredEvent[]>([[null, []]]);
  for (const e of events) {
    const as = asSingleThread(e);
    if (!as) continue;
    const key = e.session_thread_id ?? null;
    let list = byThread.get(key);
    if (!list) byThread.set(key, (list = []));
    list.push(as);
  }
  for (const [thread, list] of byThread) {
    const renumbered = list.map((e, i) => ({ ...e, seq: i + 1 }));
    for (const v of checkLogInvariants(renumbered, opts)) violations.push(`${thread ?? 'primary'}: ${v}`);
  }
  return violations;
}

function asSingleThread(e: StoredEvent): StoredEvent | null {
  const base = { id: e.id, session_id: e.session_id, seq: e.seq, processed_at: e.processed_at };
  switch (e.type) {
    case 'session.thread_created':
    case 'agent.thread_message_sent':
      return null;
    case 'agent.thread_message_received':
      return { ...base, type: 'user.message', content: e.content.length > 0 ? e.content : [{ type: 'text', text: '' }] };
    case 'session.thread_status_running':
      return { ...base, type: 'session.status_running' };
    case 'session.thread_status_idle':
      return { ...base, type: 'session.status_idle', stop_reason: e.stop_reason, stop_details: null };
    case 'session.thread_status_rescheduled':
      return { ...base, type: 'session.status_rescheduled' };
    case 'session.thread_status_terminated':
      return { ...base, type: 'session.status_terminated' };
    default:
      return e;
  }
}
