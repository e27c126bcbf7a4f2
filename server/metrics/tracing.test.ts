import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { flushTracing, startTracing, tracesEndpoint } from '~/server/metrics/tracing';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

/** An OTLP/HTTP collector: every request body it received, parsed (the exporter sends JSON). */
let collector: http.Server;
const received: unknown[] = [];
let dir: string;
let fake: FakeMessagesApi;
let rt: Runtime;

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') received.push(JSON.parse(body));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-tracing-'));
  fake = await startFakeMessagesApi();
  rt = testRuntime({ store: await openSqliteStore({ file: path.join(dir, 'db.sqlite') }), model: createAnthropicModel({ apiKey: 'k', baseURL: fake.url, model: 'claude-traced' }), dataDir: dir, harness: { maxRetries: 0 } });
});

afterAll(async () => {
  await rt.harness.close();
  await rt.store.close();
  await fake.close();
  collector.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

type OtlpSpan = { name: string; attributes: Array<{ key: string; value: Record<string, unknown> }>; status?: { code?: number } };
const spans = (): OtlpSpan[] =>
  received.flatMap((r) => (r as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v ? (v.stringValue ?? Number(v.intValue ?? v.doubleValue)) : undefined;
};

describe('OpenTelemetry traces', () => {
  it('reads the endpoint the OpenTelemetry way, and is off without one', () => {
    expect(tracesEndpoint({})).toBeNull();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe('http://collector:4318/v1/traces');
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b/traces' })).toBe('http://b/traces');
  });

  it('exports a span per model request and per tool call, with the session, model, tokens and hand kind', async () => {
    expect(startTracing(`http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`, { delayMs: 50 })).toBe(true);
    fake.enqueue(
      toolUseResponse('write', { file_path: 'a.txt', content: 'x' }, { usage: { input_tokens: 40, output_tokens: 8 } }),
      textResponse('ok', { usage: { input_tokens: 12, output_tokens: 3, cache_read_input_tokens: 40 } }),
    );
    const s = await rt.store.createSession({});
    await rt.store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'write' }] });
    await rt.harness.wake(s.id);
    for (let i = 0; i < 200 && (await rt.store.getEvents(s.id)).at(-1)?.type !== 'session.status_idle'; i++) await new Promise((r) => setTimeout(r, 20));
    await flushTracing();
    const models = spans().filter((x) => x.name === 'model.request');
    const tools = spans().filter((x) => x.name === 'tool.call');
    expect(models).toHaveLength(2);
    expect(models.map((m) => attr(m, 'gen_ai.usage.input_tokens'))).toEqual([40, 12]);
    expect(attr(models[1]!, 'paddock.usage.cache_read_input_tokens')).toBe(40);
    expect(attr(models[0]!, 'paddock.session_id')).toBe(s.id);
    expect(attr(models[0]!, 'gen_ai.request.model')).toBe('claude-traced');
    expect(tools).toHaveLength(1);
    expect(attr(tools[0]!, 'paddock.tool')).toBe('write');
    expect(attr(tools[0]!, 'paddock.hand_kind')).toBe('memory');
    expect(attr(tools[0]!, 'paddock.outcome')).toBe('ok');
  });
});
