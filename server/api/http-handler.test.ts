import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleTrpc, readCapped } from '~/server/api/http-handler';
import { ANONYMOUS_MAX_BODY_BYTES } from '~/lib/body-limits';
import { countedBody, postWith } from '~/server/api/testing/counted-body';
import { SAME_ORIGIN } from '~/server/api/testing/http';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

const MB = 1024 * 1024;
const CAP = 2 * MB;
let dir: string;
let rt: Runtime;
let cookie: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-body-cap-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir, env: { PADDOCK_MAX_BODY_BYTES: String(CAP) } });
  const signed = await rt.access.signIn(await rt.access.newSigninToken(), { host: 'localhost:3000', secure: false });
  cookie = signed!.setCookie.split(';')[0]!;
});

afterAll(async () => {
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const trpc = (req: Request) => handleTrpc(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: CAP, policy: { allowedHosts: [], allowedOrigins: [] } });
const url = (name: string) => `http://localhost:3000/api/trpc/${name}`;

describe('readCapped', () => {
  it('refuses a Content-Length over the cap without reading a byte of the body', async () => {
    const body = countedBody(160);
    expect(await readCapped(postWith(url('x'), {}, body.stream, 10 * MB), CAP)).toBeNull();
    expect(body.pulled()).toBe(0);
  });

  it('refuses a chunked body as it streams past the cap, and reads no further', async () => {
    const body = countedBody(160);
    expect(await readCapped(postWith(url('x'), {}, body.stream), CAP)).toBeNull();
    expect(body.pulled()).toBe(CAP / (64 * 1024) + 1);
  });
});

describe('the tRPC edge’s body cap', () => {
  it('answers a Content-Length over the cap 413 without reading the body, for the owner too', async () => {
    const body = countedBody(160);
    const res = await trpc(postWith(url('sessions.create'), { ...SAME_ORIGIN, cookie }, body.stream, 10 * MB));
    expect(res.status).toBe(413);
    const body413 = (await res.json()) as { error: { status: number; message: string } };
    expect(body413.error.status).toBe(413);
    expect(body413.error.message).toContain('PADDOCK_MAX_BODY_BYTES');
    expect(body.pulled()).toBe(0);
  });

  it('answers a chunked body 413 as it streams past the cap', async () => {
    const body = countedBody(160);
    const res = await trpc(postWith(url('sessions.create'), { ...SAME_ORIGIN, cookie }, body.stream));
    expect(res.status).toBe(413);
    expect(body.pulled()).toBeLessThanOrEqual(CAP / (64 * 1024) + 1);
  });

  it('refuses a stranger a body over 64 KiB (under the cap) before reading it, and reads no more than 64 KiB of a chunked one', async () => {
    const declared = countedBody(16);
    const a = await trpc(postWith(url('widget.open'), SAME_ORIGIN, declared.stream, MB));
    expect(a.status).toBe(413);
    expect(declared.pulled()).toBe(0);
    const chunked = countedBody(16);
    const b = await trpc(postWith(url('widget.open'), SAME_ORIGIN, chunked.stream));
    expect(b.status).toBe(413);
    expect(chunked.pulled()).toBeLessThanOrEqual(ANONYMOUS_MAX_BODY_BYTES / (64 * 1024) + 1);
    // Forged credentials make nobody known.
    const forged = countedBody(16);
    expect((await trpc(postWith(url('sessions.create'), { ...SAME_ORIGIN, cookie: 'paddock_session_3000=forged.jwt.value' }, forged.stream, MB))).status).toBe(413);
    expect(forged.pulled()).toBe(0);
  });

  it('takes a body over 64 KiB (under the cap) from the signed-in owner', async () => {
    const json = `{"title":"big"}${' '.repeat(300 * 1024)}`;
    const res = await trpc(new Request(url('sessions.create'), { method: 'POST', headers: { ...SAME_ORIGIN, cookie }, body: json }));
    expect(res.status).toBe(200);
  });
});
