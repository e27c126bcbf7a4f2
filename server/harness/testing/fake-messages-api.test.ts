import Anthropic, { APIError, APIUserAbortError, AuthenticationError } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  echoFallback,
  errorResponse,
  startFakeMessagesApi,
  textResponse,
  toolUseResponse,
  type FakeMessagesApi,
} from '~/server/harness/testing/fake-messages-api';

// Not a real model id: the SDK warns on deprecated ones, and the fake echoes whatever it gets.
const MODEL = 'claude-fake-test';
const params = {
  model: MODEL,
  max_tokens: 1024,
  messages: [{ role: 'user' as const, content: 'hello there' }],
};

let fake: FakeMessagesApi;
let client: Anthropic;

beforeEach(async () => {
  fake = await startFakeMessagesApi();
  client = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 0 });
});

afterEach(async () => {
  await fake.close();
});

/** The SSE event names of a raw streaming response, in order. */
async function rawEventNames(url: string): Promise<string[]> {
  const res = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key' },
    body: JSON.stringify({ ...params, stream: true }),
  });
  const text = await res.text();
  return [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1] ?? '');
}

describe('fake Messages API driven by the real SDK', () => {
  it('streams text that the SDK assembles, with text events arriving incrementally', async () => {
    fake.enqueue(textResponse('The quick brown fox jumps over the lazy dog.', { chunks: 5 }));
    const stream = client.messages.stream(params);
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();

    expect(deltas.length).toBe(5);
    expect(deltas.join('')).toBe('The quick brown fox jumps over the lazy dog.');
    expect(message.content).toEqual([{ type: 'text', text: 'The quick brown fox jumps over the lazy dog.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.model).toBe(MODEL);
    expect(message.id).toMatch(/^msg_/);
  });

  it('sends the frames in the real order: message_start, ping, block start/delta/stop, message_delta, message_stop', async () => {
    fake.enqueue(textResponse('hi', { chunks: 2 }));
    expect(await rawEventNames(fake.url)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('parses a tool_use whose input arrives as input_json_delta chunks into the original object', async () => {
    const input = { path: 'src/index.ts', lines: [1, 2, 3], options: { recursive: true, note: 'ünïcode ✓' } };
    fake.enqueue(toolUseResponse('read_file', input, { chunks: 7, id: 'toolu_01fixed' }));
    const stream = client.messages.stream(params);
    let jsonDeltas = 0;
    stream.on('inputJson', () => jsonDeltas++);
    const message = await stream.finalMessage();

    expect(jsonDeltas).toBe(7);
    expect(message.content).toEqual([{ type: 'tool_use', id: 'toolu_01fixed', name: 'read_file', input }]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('keeps thinking, text and several tool uses in order within one turn', async () => {
    fake.enqueue({
      kind: 'message',
      steps: [
        { kind: 'thinking', thinking: 'I should list files, then read one.' },
        { kind: 'text', text: 'Let me look.' },
        { kind: 'tool_use', name: 'ls', input: { dir: '.' } },
        { kind: 'tool_use', name: 'cat', input: { file: 'README.md' }, chunks: 3 },
      ],
    });
    const message = await client.messages.stream(params).finalMessage();

    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use', 'tool_use']);
    expect(message.stop_reason).toBe('tool_use');
    const [thinking, , ls, cat] = message.content;
    expect(thinking?.type === 'thinking' && thinking.thinking).toBe('I should list files, then read one.');
    expect(thinking?.type === 'thinking' && thinking.signature.length).toBeGreaterThan(0);
    expect(ls?.type === 'tool_use' && ls.input).toEqual({ dir: '.' });
    expect(cat?.type === 'tool_use' && cat.input).toEqual({ file: 'README.md' });
    expect(ls?.type === 'tool_use' && cat?.type === 'tool_use' && ls.id !== cat.id).toBe(true);
  });

  it.each([
    [529, 'overloaded_error'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
  ] as const)('surfaces a %i as the SDK APIError with that status and error type %s', async (status, type) => {
    fake.enqueue(errorResponse(status));
    const error: unknown = await client.messages
      .stream(params)
      .finalMessage()
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(APIError);
    const apiError = error as APIError;
    expect(apiError.status).toBe(status);
    expect(apiError.type).toBe(type);
    expect(apiError.error).toMatchObject({ type: 'error', error: { type } });
    expect(apiError.requestID).toMatch(/^req_/);
  });

  it('surfaces an overload sent mid-stream as an SSE error event as an APIError', async () => {
    fake.enqueue({ kind: 'error', status: 529, midStream: true });
    const error: unknown = await client.messages
      .stream(params)
      .finalMessage()
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).type).toBe('overloaded_error');
  });

  it('makes finalMessage() reject when the connection drops mid-stream', async () => {
    fake.enqueue({ kind: 'drop', afterSteps: 1, steps: [{ kind: 'text', text: 'partial answer' }, { kind: 'text', text: 'never sent' }] });
    const stream = client.messages.stream(params);
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));

    await expect(stream.finalMessage()).rejects.toThrow();
    expect(texts.join('')).toBe('partial answer');
  });

  it('rejects promptly when a hanging response is aborted via AbortSignal', async () => {
    fake.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const stream = client.messages.stream(params, { signal: controller.signal });
    const started = new Promise<void>((resolve) => stream.on('streamEvent', (e) => e.type === 'message_start' && resolve()));
    const final = stream.finalMessage();
    await started;

    const t0 = Date.now();
    controller.abort();
    await expect(final).rejects.toBeInstanceOf(APIUserAbortError);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('ends hanging connections on close() so tests do not hang', async () => {
    fake.enqueue({ kind: 'hang' });
    const final = client.messages.stream(params).finalMessage();
    const settled = final.then(
      () => 'resolved',
      () => 'rejected',
    );
    await waitFor(() => fake.requests.length === 1);
    await fake.close();
    expect(await settled).toBe('rejected');
    fake = await startFakeMessagesApi(); // afterEach closes it
  });

  it('records Authorization: Bearer from the SDK and also accepts x-api-key', async () => {
    fake.enqueue(textResponse('one'), textResponse('two'));
    await client.messages.stream(params).finalMessage();
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'raw-key', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(params),
    });

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'two' }] });
    const [sdkReq, rawReq] = fake.requests;
    expect(sdkReq).toMatchObject({ auth: 'bearer', apiKey: 'test-key', path: '/v1/messages' });
    expect(sdkReq?.headers.authorization).toBe('Bearer test-key');
    expect(sdkReq?.headers['anthropic-version']).toBeTruthy();
    expect(sdkReq?.body).toMatchObject({ model: MODEL, stream: true, messages: params.messages });
    expect(rawReq).toMatchObject({ auth: 'x-api-key', apiKey: 'raw-key' });
  });

  it('rejects a wrong key with 401 authentication_error when requireKey is set', async () => {
    const guarded = await startFakeMessagesApi({ requireKey: 'right-key' });
    try {
      guarded.enqueue(textResponse('welcome'));
      const wrong = new Anthropic({ apiKey: 'wrong-key', baseURL: guarded.url, maxRetries: 0 });
      const error: unknown = await wrong.messages
        .stream(params)
        .finalMessage()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthenticationError);
      expect((error as APIError).type).toBe('authentication_error');
      expect(guarded.pending()).toBe(1); // a rejected request consumes nothing

      const right = new Anthropic({ apiKey: 'right-key', baseURL: guarded.url, maxRetries: 0 });
      expect((await right.messages.stream(params).finalText())).toBe('welcome');
    } finally {
      await guarded.close();
    }
  });

  it('leaves cache fields out of usage with omitCacheUsage (like Ollama / llama.cpp) and the SDK still parses it', async () => {
    fake.enqueue(textResponse('local model', { omitCacheUsage: true, usage: { input_tokens: 12, output_tokens: 3 } }));
    const message = await client.messages.stream(params).finalMessage();

    expect(message.content).toEqual([{ type: 'text', text: 'local model' }]);
    expect(message.usage.input_tokens).toBe(12);
    expect(message.usage.output_tokens).toBe(3);
    expect('cache_creation_input_tokens' in message.usage).toBe(false);
    expect('cache_read_input_tokens' in message.usage).toBe(false);
  });

  it('reports cache counters by default, including explicit nulls', async () => {
    fake.enqueue(
      textResponse('a', { usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: 40 } }),
      textResponse('b', { usage: { input_tokens: 5, output_tokens: 1, cache_creation_input_tokens: null, cache_read_input_tokens: null } }),
    );
    const first = await client.messages.stream(params).finalMessage();
    const second = await client.messages.stream(params).finalMessage();

    expect(first.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 40 });
    expect(second.usage).toMatchObject({ cache_creation_input_tokens: null, cache_read_input_tokens: null });
  });

  it('answers a non-streaming request with a JSON Message of the same content', async () => {
    fake.enqueue(toolUseResponse('search', { q: 'fake' }, { text: 'Searching.' }));
    const message = await client.messages.create(params);

    expect(message.content).toEqual([
      { type: 'text', text: 'Searching.' },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/) as unknown, name: 'search', input: { q: 'fake' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage.cache_read_input_tokens).toBe(0);
  });

  it('answers count_tokens without consuming the queue, and 404s unknown paths', async () => {
    fake.enqueue(textResponse('still queued'));
    const counted = await client.messages.countTokens(params);
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(fake.pending()).toBe(1);

    const res = await fetch(`${fake.url}/v1/nope`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('fails with a 500 naming "no scripted response" when the queue is empty, unless a fallback is set', async () => {
    const error: unknown = await client.messages
      .stream(params)
      .finalMessage()
      .catch((e: unknown) => e);
    expect((error as APIError).status).toBe(500);
    expect((error as APIError).message).toContain('no scripted response');

    fake.setFallback(echoFallback);
    expect(await client.messages.stream(params).finalText()).toBe('echo: hello there');
    fake.setFallback(null);
    expect(await client.messages.stream(params).finalText().catch(() => 'failed')).toBe('failed');
  });

  it('waits delayMs before answering and chunkDelayMs between frames', async () => {
    fake.enqueue(textResponse('slow', { delayMs: 150, chunkDelayMs: 20, chunks: 2 }));
    const t0 = Date.now();
    expect(await client.messages.stream(params).finalText()).toBe('slow');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150 + 20 * 5);
  });
});

describe('control routes', () => {
  let control: FakeMessagesApi;

  beforeEach(async () => {
    control = await startFakeMessagesApi({ control: true, fallback: echoFallback });
  });

  afterEach(async () => {
    await control.close();
  });

  it('enqueues over HTTP, lists recorded requests, resets, and echoes the last user message when nothing is scripted', async () => {
    const sdk = new Anthropic({ apiKey: 'e2e', baseURL: control.url, maxRetries: 0 });
    const enqueue = await fetch(`${control.url}/_control/enqueue`, {
      method: 'POST',
      body: JSON.stringify([textResponse('scripted one'), toolUseResponse('ls', { dir: '/' })]),
    });
    expect(await enqueue.json()).toEqual({ queued: 2, pending: 2 });

    expect(await sdk.messages.stream(params).finalText()).toBe('scripted one');
    expect((await sdk.messages.stream(params).finalMessage()).stop_reason).toBe('tool_use');
    const echoed = await sdk.messages
      .stream({
        ...params,
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: [{ type: 'text', text: 'what is 2+2?' }] },
        ],
      })
      .finalText();
    expect(echoed).toBe('echo: what is 2+2?');

    const listed = (await (await fetch(`${control.url}/_control/requests`)).json()) as unknown[];
    expect(listed).toHaveLength(3); // control calls are not recorded
    expect(listed[0]).toMatchObject({ path: '/v1/messages', auth: 'bearer', apiKey: 'e2e' });

    await fetch(`${control.url}/_control/reset`, { method: 'POST' });
    expect(control.requests).toHaveLength(0);
    expect(control.pending()).toBe(0);
  });

  it('rejects a malformed enqueue with 400', async () => {
    const res = await fetch(`${control.url}/_control/enqueue`, { method: 'POST', body: JSON.stringify({ kind: 'nonsense' }) });
    expect(res.status).toBe(400);
    expect(control.pending()).toBe(0);
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 2000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('waitFor timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
