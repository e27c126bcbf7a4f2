import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { EVENT_SAMPLES } from '~/lib/testing/event-samples';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { EVENT_EXTENSIONS, PADDOCK_EVENT_TYPES } from '~/server/rest/extensions';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

/**
 * Every event /v1 serves, checked against the official SDK's own declarations (its TypeScript
 * source in node_modules): the type exists, every field the SDK requires is there, and every field
 * the SDK does not know is one of Paddock's documented extensions.
 */
interface SdkShape {
  name: string;
  required: Set<string>;
  optional: Set<string>;
}

function sdkEventShapes(): Map<string, SdkShape> {
  // The package's main entry sits at its root (index.js); its TypeScript source is under src/.
  const root = path.dirname(createRequire(import.meta.url).resolve('@anthropic-ai/sdk'));
  const dir = path.join(root, 'src/resources/beta/sessions');
  const shapes = new Map<string, SdkShape>();
  for (const file of ['events.ts', 'sessions.ts']) {
    const src = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of src.matchAll(/^export interface (BetaManagedAgents\w+Event) \{\n([\s\S]*?)^\}/gm)) {
      const body = m[2]!;
      const type = /^ {2}type: '([\w.]+)';/m.exec(body)?.[1];
      if (!type) continue;
      const required = new Set<string>();
      const optional = new Set<string>();
      for (const f of body.matchAll(/^ {2}(\w+)(\?)?:/gm)) (f[2] ? optional : required).add(f[1]!);
      shapes.set(type, { name: m[1]!, required, optional });
    }
  }
  return shapes;
}

let dir: string;
let rt: Runtime;
let served: StoredEvent[];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-sdk-shapes-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir, env: { PADDOCK_API_KEY: 'shape-test-key-0123456789' } });
  await rt.agents.ensureDefaults();
  const s = await store.createSession({});
  // One of every event type Paddock stores, with every optional field it may carry. The end of a
  // session is final (nothing is taken after it), so it is served from a session of its own.
  const { 'session.status_terminated': end, ...rest } = EVENT_SAMPLES;
  await store.emitEvents(s.id, Object.values<NewEvent>(rest));
  const ended = await store.createSession({});
  await store.emitEvent(ended.id, end);
  // And a real run (the demo brain writes a file on a memory hand): what the harness writes.
  await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'write notes.txt: hi' }] });
  await rt.harness.wake(s.id);
  const serve = async (id: string) => {
    const res = await handleRest(new Request(`http://localhost:3000/v1/sessions/${id}/events?limit=1000`, { headers: { host: 'localhost:3000', 'x-api-key': 'shape-test-key-0123456789' } }), {
      runtime: () => Promise.resolve(rt),
      maxBodyBytes: 1 << 20,
      policy: { allowedHosts: [], allowedOrigins: [] },
    });
    return ((await res.json()) as { data: StoredEvent[] }).data;
  };
  served = [...(await serve(s.id)), ...(await serve(ended.id))];
});

afterAll(async () => {
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("events as the SDK's declarations type them", () => {
  it('finds the SDK declarations it checks against', () => {
    const shapes = sdkEventShapes();
    expect(shapes.get('agent.tool_use')?.required).toEqual(new Set(['id', 'input', 'name', 'processed_at', 'type']));
    expect(shapes.size).toBeGreaterThan(20);
  });

  it('serves every SDK event type with the fields the SDK requires, and only documented extensions besides', () => {
    const shapes = sdkEventShapes();
    const problems: string[] = [];
    const types = new Set(served.map((e) => e.type));
    expect(types.size).toBeGreaterThan(25);
    for (const e of served) {
      const shape = shapes.get(e.type);
      if (!shape) {
        if (!PADDOCK_EVENT_TYPES.has(e.type)) problems.push(`${e.type}: neither an SDK event type nor a documented Paddock one`);
        continue;
      }
      for (const f of shape.required) if (!(f in e)) problems.push(`${e.type}: missing ${f}, which ${shape.name} requires`);
      const allowed = new Set([...(EVENT_EXTENSIONS['*'] ?? []), ...(EVENT_EXTENSIONS[e.type] ?? [])]);
      for (const f of Object.keys(e)) {
        if (!shape.required.has(f) && !shape.optional.has(f) && !allowed.has(f)) problems.push(`${e.type}: field ${f} is neither in ${shape.name} nor a documented extension`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('lists no extension the SDK already declares, so the documentation stays true', () => {
    const shapes = sdkEventShapes();
    const stale = Object.entries(EVENT_EXTENSIONS).flatMap(([type, fields]) => fields.filter((f) => shapes.get(type)?.required.has(f) || shapes.get(type)?.optional.has(f)).map((f) => `${type}.${f}`));
    expect(stale).toEqual([]);
  });
});
