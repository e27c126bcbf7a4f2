import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { type ContextPolicy, FULL_CONTEXT, normalizeContextPolicy } from '~/lib/context-policy';
import type { ToolSpec } from '~/lib/hand';
import type { ModelRequest, RequestSettings } from '~/server/harness/core/context';
import { Log } from '~/server/harness/testing/log-builder';

const TOOLS: ToolSpec[] = [{ name: 'bash', description: 'Run a command.', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }];
const settings = (history: ContextPolicy): RequestSettings => ({ model: 'claude-test', maxTokens: 1024, system: 'You are a test agent.', tools: TOOLS, history });

/** A session of `turns` model turns after the task, each a bash call with a result of `size` characters, then a short answer. */
function session(turns: number, size = 400): Log {
  const log = new Log();
  log.user('The task: keep the launch code 7781 in mind.');
  for (let i = 1; i <= turns; i++) {
    const start = log.spanStart();
    const call = log.toolUse(`toolu_${i}`, 'bash', { command: `step ${i}` });
    log.spanEnd(start);
    log.result(call, `output ${i} ${'x'.repeat(size)}`);
  }
  log.turn(() => log.say('All done.'));
  return log;
}

const text = (req: ModelRequest) => JSON.stringify(req.messages);
/** Messages without cache markers, which legitimately move from one request to the next. */
const plain = (req: ModelRequest) => JSON.stringify(req.messages, (k, v: unknown) => (k === 'cache_control' ? undefined : v));
const firstUserText = (req: ModelRequest) => (req.messages[0]!.content as Anthropic.Messages.ContentBlockParam[]).map((b) => (b.type === 'text' ? b.text : b.type)).join('|');

describe('context policies (buildContext)', () => {
  it('full: every event is shown, and the policy is the default of an agent that names none', () => {
    const log = session(30);
    expect(normalizeContextPolicy(undefined)).toEqual(FULL_CONTEXT);
    const req = log.build(settings(FULL_CONTEXT));
    for (let i = 1; i <= 30; i++) expect(text(req)).toContain(`output ${i} `);
  });

  it('window: keeps the task and the newest turns within the budget, with a marker naming the seq range left out', () => {
    const log = session(200);
    const req = log.build(settings({ type: 'window', max_input_tokens: 8_000 }));
    const first = firstUserText(req);
    expect(first).toContain('launch code 7781'); // the task stays
    expect(first).toMatch(/\[Events 2–\d+ of this session are left out of this context/);
    expect(first).toContain('session_events');
    expect(text(req)).toContain('output 200 '); // the newest turn is there
    expect(text(req)).not.toContain('output 3 '); // an old one is not
    expect(text(req).length / 4).toBeLessThan(8_000);
    // Roles still alternate, every call still has its result.
    req.messages.forEach((m, i) => expect(m.role).toBe(i % 2 === 0 ? 'user' : 'assistant'));
    const uses = text(req).match(/"type":"tool_use"/g)?.length ?? 0;
    const results = text(req).match(/"type":"tool_result"/g)?.length ?? 0;
    expect(uses).toBe(results);
  });

  it('window: moves in steps, so consecutive requests share their prefix until the budget overflows again', () => {
    const policy = settings({ type: 'window', max_input_tokens: 8_000 });
    let prev: ModelRequest | null = null;
    let shared = 0;
    let moved = 0;
    for (let n = 40; n <= 120; n++) {
      const req = session(n).build(policy);
      if (prev) {
        // Each request's history minus its newest turn is the previous request's (byte for byte), or the window stepped.
        const before = plain(prev).slice(0, -2);
        if (plain(req).startsWith(before.slice(0, before.lastIndexOf('{"role":"assistant"')))) shared += 1;
        else moved += 1;
      }
      prev = req;
    }
    expect(moved).toBeGreaterThan(0); // it did move…
    expect(moved).toBeLessThan(shared / 4); // …rarely: in steps, not every turn
  });

  it('clear_old_tool_results: keeps inputs, shows old outputs as pointers to their seq, in whole batches', () => {
    const policy = settings({ type: 'clear_old_tool_results', keep_recent: 3, clear_batch: 10 });
    const req = session(25).build(policy);
    const t = text(req);
    // 25 results, 3 kept: 22 could go, whole batches of 10 do.
    expect(t.match(/Output left out of this context \(event \d+\)/g)).toHaveLength(20);
    expect(t).not.toContain('output 1 ');
    expect(t).toContain('output 21 ');
    for (let i = 1; i <= 25; i++) expect(t).toContain(`step ${i}`); // every input kept
    // One more result does not change what is cleared: the prefix holds.
    const next = session(26).build(policy);
    expect(text(next).match(/Output left out/g)).toHaveLength(20);
  });

  it('compaction: the newest summary first, then only what came after the range it covers', () => {
    const log = session(10);
    const covered = log.events.at(-1)!.seq;
    log.add({ type: 'agent.thread_context_compacted', summary: 'Summary: launch code 7781; ten steps done.', from_seq: 1, to_seq: covered });
    log.user('And now?');
    log.turn(() => log.say('Continuing.'));
    const req = log.build(settings({ type: 'compaction', trigger_input_tokens: 50_000 }));
    expect(firstUserText(req)).toContain(`Summary of this session's events 1–${covered}`);
    expect(firstUserText(req)).toContain('launch code 7781; ten steps done.');
    expect(firstUserText(req)).toContain('And now?');
    expect(text(req)).not.toContain('output 5 ');
    expect(text(req)).toContain('Continuing.');
    // Under `full`, the same log shows everything: switching policies never loses data.
    expect(text(log.build(settings(FULL_CONTEXT)))).toContain('output 5 ');
  });
});
