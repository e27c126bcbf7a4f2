import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import type { ToolSpec } from '~/lib/hand';
import { BRAIN_TOOLS } from '~/lib/tools';
import { type RequestSettings, type ModelRequest, SYSTEM_PROMPT, buildContext } from '~/server/harness/core/context';
import { Log } from '~/server/harness/testing/log-builder';

type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;

const TOOLS: ToolSpec[] = [
  { name: 'bash', description: 'Run a command.', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
  { name: 'read', description: 'Read a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'write', description: 'Write a file.', input_schema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } },
];
const POLICY: RequestSettings = { model: 'claude-test', maxTokens: 4096, system: 'You are a test agent.', tools: TOOLS };
const blocksOf = (m: MessageParam | undefined): ContentBlockParam[] => (m && Array.isArray(m.content) ? m.content : []);

/** Every block in the request that carries a cache_control marker, by where it sits. */
function breakpoints(req: ModelRequest): string[] {
  const out: string[] = [];
  (req.tools ?? []).forEach((t, i) => {
    if ('cache_control' in t && t.cache_control) out.push(`tools.${i}`);
  });
  const system = Array.isArray(req.system) ? req.system : [];
  system.forEach((b, i) => {
    if (b.cache_control) out.push(`system.${i}`);
  });
  req.messages.forEach((m, i) =>
    blocksOf(m).forEach((b, j) => {
      if ('cache_control' in b && b.cache_control) out.push(`messages.${i}.${j}`);
    }),
  );
  return out;
}

/** JSON without the cache_control markers, which legitimately move as the session grows. */
const unmarked = (x: unknown): string => JSON.stringify(x, (k, v: unknown) => (k === 'cache_control' ? undefined : v));

/** A session of several turns: text, thinking, parallel tools, an error result, a crash, a browser result. */
function longSession(): { log: Log; requestPoints: number[] } {
  const log = new Log();
  const requestPoints: number[] = [];
  const ask = () => requestPoints.push(log.events.length);

  log.user('Set up the project.');
  ask();
  let a!: StoredEvent;
  let b!: StoredEvent;
  log.turn(() => {
    log.think('plan');
    log.say('Looking around.');
    a = log.toolUse('toolu_A', 'bash', { command: 'ls' });
    b = log.toolUse('toolu_B', 'read', { file_path: 'package.json' });
  });
  log.result(b, '{"name":"x"}');
  log.result(a, 'command not found', { isError: true });
  ask();
  log.spanStart(); // crashed mid-stream: adds nothing, asked again
  ask();
  let c!: StoredEvent;
  log.turn(() => {
    c = log.toolUse('toolu_C', 'write', { file_path: 'a.txt', content: 'hi' });
  });
  log.result(c, 'wrote a.txt', { by: 'user' });
  ask();
  log.turn(() => log.say('Done.'));
  log.add({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
  log.user('Now add a test.', 'Use vitest.');
  ask();
  log.turn(() => log.say('Added.'));
  return { log, requestPoints };
}

describe('buildContext: layout and cache breakpoints', () => {
  it('carries the tools, then the system prompt, then the messages, with the policy’s model and max_tokens', () => {
    const log = new Log();
    log.user('hi');
    const req = log.build(POLICY);
    expect(req.model).toBe('claude-test');
    expect(req.max_tokens).toBe(4096);
    expect(req.tools?.map((t) => ('name' in t ? t.name : null))).toEqual(['bash', 'read', 'write']);
    expect(req.tools?.[0]).toEqual({ name: 'bash', description: 'Run a command.', input_schema: TOOLS[0]!.input_schema });
    expect(req.system).toEqual([{ type: 'text', text: 'You are a test agent.', cache_control: { type: 'ephemeral' } }]);
    expect(req.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }]);
  });

  it('marks the last tool, the system block and the last block of the newest user message, nothing else', () => {
    const log = new Log();
    log.user('first', 'question');
    log.turn(() => log.say('answer'));
    log.user('second', 'question');
    const req = log.build(POLICY);
    expect(breakpoints(req)).toEqual(['tools.2', 'system.0', 'messages.2.1']);
  });

  it('marks the newest user message even when an assistant turn follows it', () => {
    const log = new Log();
    log.user('first');
    log.turn(() => log.say('answer'));
    expect(breakpoints(log.build(POLICY))).toEqual(['tools.2', 'system.0', 'messages.0.0']);
  });

  it('marks the last tool result when a user message holds only results', () => {
    const log = new Log();
    log.user('go');
    let a!: StoredEvent;
    let b!: StoredEvent;
    log.turn(() => {
      a = log.toolUse('toolu_A');
      b = log.toolUse('toolu_B');
    });
    log.result(a, 'one');
    log.result(b, 'two');
    const req = log.build(POLICY);
    expect(breakpoints(req)).toEqual(['tools.2', 'system.0', 'messages.2.1']);
    expect(blocksOf(req.messages[2])[1]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_B' });
  });

  it('uses at most the four breakpoints the API allows, with the real tool set', () => {
    const { log } = longSession();
    const req = log.build({ ...POLICY, tools: BRAIN_TOOLS, system: SYSTEM_PROMPT });
    expect(breakpoints(req).length).toBeLessThanOrEqual(4);
    expect(req.tools?.length).toBe(BRAIN_TOOLS.length);
  });

  it('sends no tools and no tool breakpoint when the policy has no tools', () => {
    const log = new Log();
    log.user('hi');
    const req = log.build({ ...POLICY, tools: [] });
    expect(req.tools).toEqual([]);
    expect(breakpoints(req)).toEqual(['system.0', 'messages.0.0']);
  });
});

describe('buildContext: history', () => {
  it('merges the thinking, text and two tool uses of one turn into one assistant message with Claude’s toolu ids', () => {
    const log = new Log();
    log.user('go');
    log.turn(() => {
      log.think('I should list files');
      log.say('Let me look.');
      log.toolUse('toolu_01A', 'bash', { command: 'ls' });
      log.toolUse('toolu_01B', 'read', { file_path: 'README.md' });
    });
    const req = log.build(POLICY);
    expect(req.messages).toHaveLength(2);
    expect(req.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should list files', signature: 'sig-I should list files' },
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_01A', name: 'bash', input: { command: 'ls' } },
        { type: 'tool_use', id: 'toolu_01B', name: 'read', input: { file_path: 'README.md' } },
      ],
    });
  });

  it('maps tool results from event ids back to Claude’s toolu ids, keeping is_error and content', () => {
    const log = new Log();
    log.user('go');
    let a!: StoredEvent;
    let b!: StoredEvent;
    let c!: StoredEvent;
    log.turn(() => {
      a = log.toolUse('toolu_01A');
      b = log.toolUse('toolu_01B');
      c = log.toolUse('toolu_01C');
    });
    log.result(b, 'no such file', { isError: true });
    log.result(a, 'a.txt');
    log.result(c, 'fine', { isError: false, by: 'user' });
    const results = blocksOf(log.build(POLICY).messages[2]).map((blk) => (blk.type === 'tool_result' ? { ...blk, cache_control: undefined } : blk));
    expect(results).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_01B', content: [{ type: 'text', text: 'no such file' }], is_error: true, cache_control: undefined },
      { type: 'tool_result', tool_use_id: 'toolu_01A', content: [{ type: 'text', text: 'a.txt' }], cache_control: undefined },
      { type: 'tool_result', tool_use_id: 'toolu_01C', content: [{ type: 'text', text: 'fine' }], cache_control: undefined },
    ]);
    for (const blk of results) if (blk.type === 'tool_result' && blk.tool_use_id !== 'toolu_01B') expect('is_error' in blk).toBe(false);
  });

  it('puts tool_result blocks first in a user message that also has text', () => {
    const log = new Log();
    log.user('go');
    let a!: StoredEvent;
    let b!: StoredEvent;
    log.turn(() => {
      a = log.toolUse('toolu_A');
      b = log.toolUse('toolu_B');
    });
    log.result(a, 'one');
    log.user('also check the tests'); // arrives while a tool is still running
    log.result(b, 'two');
    const req = log.build(POLICY);
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(blocksOf(req.messages[2]).map((blk) => blk.type)).toEqual(['tool_result', 'tool_result', 'text']);
    expect(breakpoints(req)).toEqual(['tools.2', 'system.0', 'messages.2.2']);
  });

  it('adds nothing for an interrupted model request (a span start without an end)', () => {
    const log = new Log();
    log.user('go');
    const before = unmarked(log.build(POLICY));
    log.spanStart();
    expect(unmarked(log.build(POLICY))).toBe(before);
    log.add({ type: 'user.interrupt' });
    expect(unmarked(log.build(POLICY))).toBe(before);
  });

  it.each([
    ['a message after it', true, ['user', 'assistant', 'user'], ['[The user interrupted this answer here.]', 'and now?']],
    ['nothing after it yet', false, ['user', 'assistant', 'user'], ['[The user interrupted this answer here.]']],
  ])('shows an interrupted answer as far as it streamed, then says it was cut (%s)', (_, more, roles, lastTexts) => {
    const log = new Log();
    log.user('count to a hundred');
    const start = log.spanStart();
    log.add({ type: 'user.interrupt' });
    log.add({ type: 'agent.message', content: [{ type: 'text', text: '1, 2, 3, ' }], interrupted: true });
    log.spanEnd(start, true);
    if (more) log.user('and now?');
    const req = log.build(POLICY);
    expect(req.messages.map((m) => m.role)).toEqual(roles);
    expect(blocksOf(req.messages[1])).toEqual([{ type: 'text', text: '1, 2, 3, ' }]);
    expect(blocksOf(req.messages[2]).map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(lastTexts);
  });

  it('ignores bookkeeping events: status, spans, errors, hands, compaction', () => {
    const log = new Log();
    log.user('go');
    const before = JSON.stringify(log.build(POLICY));
    log.add({ type: 'session.status_running' });
    log.spanEnd(log.spanStart(), true);
    log.add({ type: 'session.status_rescheduled', attempt: 1, retry_in_ms: 10 });
    log.add({ type: 'session.error', error: { type: 'model_overloaded_error', message: 'x', retry_status: { type: 'retrying' } } });
    log.add({ type: 'hand.provisioned', hand: 'sandbox-1', kind: 'sandbox' });
    log.add({ type: 'agent.thread_context_compacted' });
    expect(JSON.stringify(log.build(POLICY))).toBe(before);
  });

  it('drops empty text blocks, and a message left with no blocks at all', () => {
    const log = new Log();
    log.user('', 'hello', '');
    log.turn(() => log.say('')); // an empty answer
    log.user('');
    log.turn(() => log.say('', 'there'));
    const req = log.build(POLICY);
    expect(unmarked(req.messages)).toBe(
      unmarked([
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'there' }] },
      ]),
    );
  });

  it('drops redacted blocks and thinking events without content', () => {
    const log = new Log();
    log.add({ type: 'user.message', content: [{ type: 'redacted' }, { type: 'text', text: 'hi' }] });
    log.turn(() => {
      log.add({ type: 'agent.thinking' });
      log.add({ type: 'agent.message', content: [{ type: 'redacted' }, { type: 'text', text: 'yo' }] });
    });
    expect(unmarked(log.build(POLICY).messages)).toBe(
      unmarked([
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'yo' }] },
      ]),
    );
  });

  // The Messages API rejects `{ type: 'text', text: '' }` anywhere in `messages` (400 "text content
  // blocks must be non-empty"); a tool can legitimately return nothing (reading an empty file).
  it('drops empty text blocks inside tool results too (a tool that printed nothing)', () => {
    const log = new Log();
    log.user('go');
    let a!: StoredEvent;
    log.turn(() => {
      a = log.toolUse('toolu_A', 'read', { file_path: 'empty.txt' });
    });
    log.result(a, '');
    const json = JSON.stringify(log.build(POLICY).messages);
    expect(json).toContain('"tool_use_id":"toolu_A"');
    expect(json).not.toContain('"text":""');
  });

  it('passes user images and documents through, with a document’s title', () => {
    const log = new Log();
    log.add({
      type: 'user.message',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'spec' }, title: 'Spec' },
        { type: 'document', source: { type: 'file', file_id: 'file_1' }, title: null },
        { type: 'text', text: 'Implement this.' },
      ],
    });
    expect(unmarked(log.build(POLICY).messages)).toBe(
      unmarked([
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'spec' }, title: 'Spec' },
            { type: 'document', source: { type: 'file', file_id: 'file_1' } },
            { type: 'text', text: 'Implement this.' },
          ],
        },
      ]),
    );
  });

  // DocumentBlockParam has `context` ("additional context about the document"); the event schema
  // accepts it and tool-result documents keep it, but a user.message document loses it.
  it('keeps a user document’s context for Claude', () => {
    const log = new Log();
    log.add({
      type: 'user.message',
      content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'spec' }, title: 'Spec', context: 'the product spec, v2' }],
    });
    expect(blocksOf(log.build(POLICY).messages[0])[0]).toMatchObject({ type: 'document', title: 'Spec', context: 'the product spec, v2' });
  });

  it('ignores a result whose tool_use is unknown', () => {
    const log = new Log();
    log.user('go');
    log.turn(() => log.say('ok'));
    const before = JSON.stringify(log.build(POLICY));
    log.add({ type: 'agent.tool_result', tool_use_id: 'sevt_never_made', content: [{ type: 'text', text: 'stray' }] });
    log.add({ type: 'user.tool_result', tool_use_id: 'sevt_also_unknown', is_error: true });
    expect(JSON.stringify(log.build(POLICY))).toBe(before);
  });

  // The API rejects a request with two tool_result blocks for one tool_use ("each tool_use must
  // have a single result"). The log can hold two: the harness cancels an interrupted call with an
  // agent.tool_result, and the client that was running it still posts its user.tool_result.
  it('keeps only the first result for a call that got two (a cancelled call whose late result arrives)', () => {
    const log = new Log();
    log.user('go');
    let a!: StoredEvent;
    log.turn(() => {
      a = log.toolUse('toolu_A');
    });
    log.add({ type: 'user.interrupt' });
    log.result(a, 'interrupted by the user before the tool finished', { isError: true });
    log.result(a, 'finished after all', { by: 'user' });
    log.user('what happened?');
    const req = log.build(POLICY);
    const results = req.messages.flatMap((m) => blocksOf(m).filter((blk) => blk.type === 'tool_result'));
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ tool_use_id: 'toolu_A', is_error: true });
  });

  it('ignores a result that precedes its tool_use in the log', () => {
    const log = new Log();
    log.user('go');
    const early = log.add({ type: 'agent.tool_result', tool_use_id: `sevt_${String(4).padStart(26, '0')}`, content: [{ type: 'text', text: 'early' }] });
    log.turn(() => void log.toolUse('toolu_A'));
    expect(early.tool_use_id).toBe(log.events[3]!.id);
    expect(JSON.stringify(log.build(POLICY).messages)).not.toContain('early');
  });
});

describe('buildContext: cache stability and determinism', () => {
  it('keeps every previous request’s messages as a byte-identical prefix as the session grows', () => {
    const { log, requestPoints } = longSession();
    const requests = requestPoints.map((n) => buildContext(log.events.slice(0, n), POLICY));
    for (let i = 1; i < requests.length; i++) {
      const prev = requests[i - 1]!;
      const next = requests[i]!;
      expect(next.messages.length).toBeGreaterThanOrEqual(prev.messages.length);
      // message by message…
      expect(unmarked(next.messages.slice(0, prev.messages.length))).toBe(unmarked(prev.messages));
      // …and as bytes: the previous history (without its closing bracket) starts the next one.
      expect(unmarked(next.messages).startsWith(unmarked(prev.messages).slice(0, -1))).toBe(true);
    }
  });

  it('moves the message breakpoint forward: exactly one per request, on its newest user content', () => {
    const { log, requestPoints } = longSession();
    for (const n of requestPoints) {
      const req = buildContext(log.events.slice(0, n), POLICY);
      const marks = breakpoints(req).filter((p) => p.startsWith('messages.'));
      const lastUser = req.messages.findLastIndex((m) => m.role === 'user');
      expect(marks).toEqual([`messages.${lastUser}.${blocksOf(req.messages[lastUser]).length - 1}`]);
    }
  });

  it('keeps tools and system byte-identical across turns', () => {
    const { log, requestPoints } = longSession();
    const heads = requestPoints.map((n) => {
      const req = buildContext(log.events.slice(0, n), POLICY);
      return JSON.stringify({ tools: req.tools, system: req.system, model: req.model, max_tokens: req.max_tokens });
    });
    expect(new Set(heads).size).toBe(1);
  });

  it('gives byte-identical output for the same events, and leaves the events untouched', () => {
    const { log } = longSession();
    const snapshot = JSON.stringify(log.events);
    const first = JSON.stringify(log.build(POLICY));
    const second = JSON.stringify(log.build(POLICY));
    const fromCopy = JSON.stringify(buildContext(JSON.parse(snapshot) as StoredEvent[], POLICY));
    expect(second).toBe(first);
    expect(fromCopy).toBe(first);
    expect(JSON.stringify(log.events)).toBe(snapshot);
  });

  it('produces a request the API accepts: user first and last, roles alternating, every tool_use answered next', () => {
    const { log, requestPoints } = longSession();
    for (const n of requestPoints) {
      const msgs = buildContext(log.events.slice(0, n), POLICY).messages;
      expect(msgs[0]?.role).toBe('user');
      expect(msgs.at(-1)?.role).toBe('user');
      msgs.forEach((m, i) => {
        if (i > 0) expect(m.role).not.toBe(msgs[i - 1]!.role);
        const uses = blocksOf(m).flatMap((blk) => (blk.type === 'tool_use' ? [blk.id] : []));
        const answered = blocksOf(msgs[i + 1]).flatMap((blk) => (blk.type === 'tool_result' ? [blk.tool_use_id] : []));
        for (const id of uses) expect(answered).toContain(id);
      });
    }
  });
});

describe('buildContext: user edits', () => {
  it('shows a file the user edited in the IDE to the brain as user text', () => {
    const log = new Log();
    log.user('fix it');
    log.add({ type: 'user.file_edit', hand: 'browser-1', path: 'src/a.js', content: 'let x = 2;' });
    const json = JSON.stringify(log.build(POLICY).messages);
    expect(json).toContain('The user edited src/a.js on hand browser-1');
    expect(json).toContain('let x = 2;');
  });
});

describe('buildContext: lost hands', () => {
  it('tells the brain which hand was lost and that its files are gone, also between a call and its result', () => {
    const log = new Log();
    log.user('append a line');
    let call!: StoredEvent;
    log.turn(() => {
      call = log.toolUse('toolu_1');
    });
    log.add({ type: 'hand.lost', hand: 'sandbox-1', reason: 'its server process is gone' });
    log.result(call, 'hand sandbox-1 was lost', { isError: true });
    const { messages } = log.build(POLICY);
    const last = messages.at(-1)!;
    expect(last.role).toBe('user');
    const blocks = last.content as ContentBlockParam[];
    // The API wants the tool_result first in the user turn; the note about the hand follows it.
    expect(blocks.map((b) => b.type)).toEqual(['tool_result', 'text']);
    expect(JSON.stringify(blocks[1])).toContain('hand sandbox-1 was lost: its server process is gone; its workspace and files are gone');
  });
});

describe('a message sent while the model answers', () => {
  it('goes after the answer it arrived during, so the request ends with the user and the message gets its own turn', () => {
    const log = new Log();
    log.user('first');
    const start = log.spanStart();
    log.user('second, while you answer');
    log.say('answer to first');
    log.spanEnd(start);
    const req = log.build(POLICY);
    expect(req.messages.map((m) => [m.role, blocksOf(m).map((b) => (b.type === 'text' ? b.text : b.type))])).toEqual([
      ['user', ['first']],
      ['assistant', ['answer to first']],
      ['user', ['second, while you answer']],
    ]);
  });

  it('follows a request cut off before its end was stored, and a tool result of the turn still comes first in its user turn', () => {
    const cut = new Log();
    cut.user('first');
    cut.spanStart();
    cut.user('second');
    expect(cut.build(POLICY).messages.map((m) => m.role)).toEqual(['user']);
    expect(blocksOf(cut.build(POLICY).messages[0]).map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['first', 'second']);

    const tools = new Log();
    tools.user('run ls');
    const start = tools.spanStart();
    const call = tools.toolUse('toolu_1');
    tools.user('and then say hi');
    tools.spanEnd(start);
    tools.result(call, 'a.txt');
    const req = tools.build(POLICY);
    expect(req.messages.map((m) => [m.role, blocksOf(m).map((b) => b.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['tool_use']],
      ['user', ['tool_result', 'text']],
    ]);
  });
});
