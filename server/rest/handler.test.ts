import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countedBody, postWith } from '~/server/api/testing/counted-body';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

const MB = 1024 * 1024;
const CAP = 2 * MB;
const KEY = 'pdk_body-cap-test-key-0123456789';
const HOST = { host: 'localhost:3000', 'content-type': 'application/json' };
let dir: string;
let rt: Runtime;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-rest-cap-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir, env: { PADDOCK_API_KEY: KEY, PADDOCK_MAX_BODY_BYTES: String(CAP) } });
});

afterAll(async () => {
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const rest = (req: Request, runtime: () => Promise<Runtime> = () => Promise.resolve(rt)) => handleRest(req, { runtime, maxBodyBytes: CAP, policy: { allowedHosts: [], allowedOrigins: [] } });
const URL_ = 'http://localhost:3000/v1/agents';

describe('the REST edge’s body cap', () => {
  it('answers a Content-Length over the cap 413 in the API’s shape before the caller is looked up or a byte is read', async () => {
    const body = countedBody(160);
    let lookedUp = false;
    // A key that the lookup would refuse: the size is refused before anyone looks.
    const res = await rest(postWith(URL_, { ...HOST, 'x-api-key': 'pdk_wrong' }, body.stream, 10 * MB), () => {
      lookedUp = true;
      return Promise.resolve(rt);
    });
    expect(res.status).toBe(413);
    const answer = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(answer).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
    expect(answer.error.message).toContain('PADDOCK_MAX_BODY_BYTES');
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(lookedUp).toBe(false);
    expect(body.pulled()).toBe(0);
  });

  it('answers a chunked body from a key 413 as it streams past the cap, reading no further', async () => {
    const body = countedBody(160);
    const res = await rest(postWith(URL_, { ...HOST, 'x-api-key': KEY }, body.stream));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
    expect(body.pulled()).toBe(CAP / (64 * 1024) + 1);
  });

  it('answers a stranger 401 without reading any of its body', async () => {
    const body = countedBody(160);
    const res = await rest(postWith(URL_, HOST, body.stream));
    expect(res.status).toBe(401);
    expect(body.pulled()).toBe(0);
  });
});
