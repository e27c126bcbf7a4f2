import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeMessagesApi, textResponse } from '~/server/harness/testing/fake-messages-api';
import { type SdkServer, startSdkServer } from '~/server/rest/testing/sdk-server';
import type { Runtime } from '~/server/runtime';
import { checkLogInvariants } from '~/server/harness/testing/log-invariants';

/**
 * Outcomes end to end: the official SDK against the /v1 handler, the agent and its grader both
 * answered by the scripted fake Messages API over real HTTP + SSE.
 */
let sdk: SdkServer;
let rt: Runtime;
let fake: FakeMessagesApi;
let client: Anthropic;

beforeEach(async () => {
  sdk = await startSdkServer({ name: 'outcomes', harness: { outcomeHeartbeatMs: 30 }, maxBodyBytes: 512 * 1024 });
  ({ rt, fake, client } = sdk);
});

afterEach(() => sdk.close());

async function allEvents(sessionId: string) {
  const events = [];
  for await (const e of client.beta.sessions.events.list(sessionId)) events.push(e);
  return events;
}

async function until(sessionId: string, done: (types: string[]) => boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const types = (await allEvents(sessionId)).map((e) => e.type);
    if (done(types)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`session ${sessionId}: condition not reached`);
}

const idle = (types: string[]) => types.at(-1) === 'session.status_idle';
/** The stored log holds the harness's invariants (outcome spans included). */
const invariants = async (sessionId: string) => expect(checkLogInvariants(await rt.store.getEvents(sessionId))).toEqual([]);
const verdict = (result: string, explanation: string) => textResponse(JSON.stringify({ result, explanation }), { usage: { input_tokens: 200, output_tokens: 20 } });
const grading = (body: { system?: unknown }) => JSON.stringify(body.system ?? '').includes('strict grader');

async function newSession() {
  return client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
}

/** The events of a log that tell an outcome's story, in order. */
const story = (types: string[]) => types.filter((t) => t.startsWith('span.outcome_evaluation_') && t !== 'span.outcome_evaluation_ongoing' || t === 'user.define_outcome' || t === 'agent.message' || t === 'session.status_idle');

describe('outcomes, through the official SDK', () => {
  it('revises once on needs_revision, then ends satisfied, with the evaluations on the session object', { timeout: 60_000 }, async () => {
    const session = await newSession();
    fake.enqueue(textResponse('draft one'), verdict('needs_revision', 'the second line is too long'), textResponse('draft two'), verdict('satisfied', 'all three lines scan'));
    const defined = (await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.define_outcome', description: 'Write a haiku about tests', rubric: { type: 'text', content: 'Three lines, 5-7-5 syllables.' } }] })).data?.[0];
    expect(defined).toMatchObject({ type: 'user.define_outcome', max_iterations: 3, rubric: { type: 'text', content: 'Three lines, 5-7-5 syllables.' } });
    const outcomeId = (defined as { outcome_id: string }).outcome_id;
    expect(outcomeId).toMatch(/^outc_/);
    await until(session.id, idle);
    await invariants(session.id);

    const events = await allEvents(session.id);
    expect(story(events.map((e) => e.type))).toEqual([
      'user.define_outcome',
      'agent.message',
      'span.outcome_evaluation_start',
      'span.outcome_evaluation_end',
      'agent.message',
      'span.outcome_evaluation_start',
      'span.outcome_evaluation_end',
      'session.status_idle',
    ]);
    const ends = events.filter((e) => e.type === 'span.outcome_evaluation_end');
    expect(ends.map((e) => [e.result, e.iteration, e.outcome_id])).toEqual([['needs_revision', 0, outcomeId], ['satisfied', 1, outcomeId]]);
    const starts = events.filter((e) => e.type === 'span.outcome_evaluation_start');
    expect(ends.map((e) => e.outcome_evaluation_start_id)).toEqual(starts.map((s) => s.id));
    expect(ends[0]!.usage).toMatchObject({ input_tokens: 200, output_tokens: 20 });

    // The agent saw the outcome, then the grader's explanation; the grader saw the rubric and the draft, not the agent's tools.
    const [, agentSecond] = fake.requests.filter((r) => r.body && !grading(r.body));
    expect(JSON.stringify(agentSecond!.body!.messages)).toContain('the second line is too long');
    const graderFirst = fake.requests.find((r) => r.body && grading(r.body))!;
    expect(JSON.stringify(graderFirst.body!.messages)).toContain('5-7-5');
    expect(JSON.stringify(graderFirst.body!.messages)).toContain('draft one');
    expect(graderFirst.body!.tools).toBeUndefined();

    const got = await client.beta.sessions.retrieve(session.id);
    expect(got.outcome_evaluations).toEqual([
      expect.objectContaining({ type: 'outcome_evaluation', outcome_id: outcomeId, result: 'satisfied', iteration: 1, explanation: 'all three lines scan', description: 'Write a haiku about tests' }),
    ]);
    expect(got.outcome_evaluations[0]!.completed_at).not.toBeNull();
    // The grader's requests are counted in the session's usage (two agent turns, two grader turns).
    const agentTokens = fake.requests.filter((r) => r.body && !grading(r.body)).length;
    expect(agentTokens).toBe(2);
    expect(got.usage.output_tokens).toBeGreaterThanOrEqual(40);
    const modelEnds = events.filter((e) => e.type === 'span.model_request_end').reduce((n, e) => n + e.model_usage.output_tokens, 0);
    expect(got.usage.output_tokens).toBe(modelEnds + 40);
    // Each verdict comes with a snapshot of the usage so far, the grader's included.
    const snapshots = events.filter((e) => e.type === 'session.usage');
    expect(snapshots.length).toBe(2);
    expect(snapshots[1]!.usage.output_tokens).toBe(got.usage.output_tokens);
  });

  it('ends max_iterations_reached when the last iteration still needs revision, after one last agent turn', { timeout: 60_000 }, async () => {
    const session = await newSession();
    fake.enqueue(textResponse('try one'), verdict('needs_revision', 'not yet'), textResponse('try two'), verdict('needs_revision', 'still not'), textResponse('Understood, stopping.'));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.define_outcome', description: 'Prove P = NP', rubric: { type: 'text', content: 'A proof.' }, max_iterations: 2 }] });
    await until(session.id, idle);
    await invariants(session.id);
    const events = await allEvents(session.id);
    const ends = events.filter((e) => e.type === 'span.outcome_evaluation_end');
    expect(ends.map((e) => e.result)).toEqual(['needs_revision', 'max_iterations_reached']);
    expect(events.filter((e) => e.type === 'agent.message').length).toBe(3);
    expect(events.findLast((e) => e.type === 'agent.message')).toMatchObject({ content: [{ type: 'text', text: 'Understood, stopping.' }] });
    expect(fake.requests.length).toBe(5);
    const got = await client.beta.sessions.retrieve(session.id);
    expect(got.outcome_evaluations[0]).toMatchObject({ result: 'max_iterations_reached', iteration: 1, explanation: 'still not' });
  });

  it('ends an evaluation the user interrupts as interrupted, after its heartbeats', { timeout: 60_000 }, async () => {
    const session = await newSession();
    fake.enqueue(textResponse('done, I think'), { kind: 'hang' });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.define_outcome', description: 'Anything', rubric: { type: 'text', content: 'Anything goes.' } }] });
    await until(session.id, (types) => types.includes('span.outcome_evaluation_ongoing'));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.interrupt' }] });
    await until(session.id, idle);
    await invariants(session.id);
    const events = await allEvents(session.id);
    const end = events.find((e) => e.type === 'span.outcome_evaluation_end');
    expect(end).toMatchObject({ result: 'interrupted', iteration: 0 });
    const types = events.map((e) => e.type);
    expect(types.indexOf('span.outcome_evaluation_ongoing')).toBeGreaterThan(types.indexOf('span.outcome_evaluation_start'));
    expect(types.lastIndexOf('span.outcome_evaluation_ongoing')).toBeLessThan(types.indexOf('span.outcome_evaluation_end'));
    const got = await client.beta.sessions.retrieve(session.id);
    expect(got.outcome_evaluations[0]).toMatchObject({ result: 'interrupted' });
  });

  it('redoes a grader request a crash cut off under the same span, counting only the answer stored', { timeout: 60_000 }, async () => {
    const session = await newSession();
    fake.enqueue(textResponse('the work'), { kind: 'hang' });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.define_outcome', description: 'Anything', rubric: { type: 'text', content: 'Anything goes.' } }] });
    await until(session.id, (types) => types.includes('span.outcome_evaluation_start'));
    // The harness goes away mid-evaluation (its lease released, nothing more written); another takes over.
    rt = await sdk.restart();
    fake.enqueue(verdict('satisfied', 'fine'));
    await rt.harness.wake(session.id);
    await until(session.id, idle);
    await invariants(session.id);
    const events = await allEvents(session.id);
    const starts = events.filter((e) => e.type === 'span.outcome_evaluation_start');
    const ends = events.filter((e) => e.type === 'span.outcome_evaluation_end');
    expect(starts.length).toBe(1);
    expect(ends.map((e) => [e.result, e.outcome_evaluation_start_id])).toEqual([['satisfied', starts[0]!.id]]);
    expect(fake.requests.filter((r) => r.body && grading(r.body)).length).toBe(2);
    const got = await client.beta.sessions.retrieve(session.id);
    const modelEnds = events.filter((e) => e.type === 'span.model_request_end').reduce((n, e) => n + e.model_usage.output_tokens, 0);
    expect(got.usage.output_tokens).toBe(modelEnds + 20);
  });

  it('takes a file rubric, stored resolved to its text', { timeout: 60_000 }, async () => {
    const file = await client.beta.files.upload({ file: await toFile(Buffer.from('Must mention bolts.'), 'rubric.md', { type: 'text/markdown' }) });
    const session = await newSession();
    fake.enqueue(textResponse('bolts'), verdict('satisfied', 'mentions bolts'));
    const defined = (await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.define_outcome', description: 'Say bolts', rubric: { type: 'file', file_id: file.id } }] })).data?.[0];
    expect(defined).toMatchObject({ rubric: { type: 'text', content: 'Must mention bolts.' }, rubric_file_id: file.id });
    await until(session.id, idle);
    await invariants(session.id);
    expect((await client.beta.sessions.retrieve(session.id)).outcome_evaluations[0]).toMatchObject({ result: 'satisfied' });
  });

  it('refuses bad define_outcome input with a 400 naming the field, storing nothing', async () => {
    const session = await newSession();
    const send = (event: Record<string, unknown>) => client.beta.sessions.events.send(session.id, { events: [{ type: 'user.define_outcome', description: 'x', rubric: { type: 'text', content: 'y' }, ...event } as never] });
    const cases: [Record<string, unknown>, string][] = [
      [{ max_iterations: 21 }, 'max_iterations'],
      [{ max_iterations: 0 }, 'max_iterations'],
      [{ description: '' }, 'description'],
      [{ description: '   ' }, 'description'],
      [{ rubric: { type: 'file', file_id: 'file_01J9Z3QWERTYASDFGHZXCVBNM0' } }, 'rubric.file_id'],
      [{ rubric: { type: 'file', file_id: 'nope' } }, 'rubric.file_id'],
      [{ rubric: { type: 'text', content: '' } }, 'rubric.content'],
      [{ rubric: { type: 'text', content: 'y' }, extra: 1 }, 'extra'],
    ];
    for (const [event, field] of cases) {
      const err = await send(event).then(() => null, (e: unknown) => e);
      expect(err, JSON.stringify(event)).toBeInstanceOf(Anthropic.BadRequestError);
      expect((err as Error).message, JSON.stringify(event)).toContain(field);
    }
    expect(await allEvents(session.id)).toEqual([]);
  });
});
