import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handleFileDownload } from '~/server/api/file-download';
import { uploadFile } from '~/server/commands/file-commands';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

let dir: string;
let rt: Runtime;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-file-download-'));
  rt = testRuntime({ store: await openSqliteStore({ file: path.join(dir, 'db.sqlite') }), model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: 'pdk_test_key_0123456789abcdef' } });
});

afterEach(async () => {
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the session page download link', () => {
  it("streams a file's exact bytes to the signed-in owner as an attachment, and refuses anyone else", async () => {
    const bytes = Buffer.from([0, 255, 1, 2, 3, 10]);
    const f = await uploadFile(rt, { filename: 'out/r é.bin', mimeType: 'application/octet-stream', source: Readable.from([bytes]), maxBytes: 1 << 20, fields: Promise.resolve({}) });
    const signed = await rt.access.signIn(await rt.access.newSigninToken(), { host: 'localhost:3000', secure: false });
    const cookie = signed!.setCookie.split(';')[0]!;
    const res = await handleFileDownload(new Request('http://localhost:3000/files/x', { headers: { host: 'localhost:3000', cookie } }), f.id, rt);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename*=UTF-8''${encodeURIComponent('out/r é.bin')}`);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);

    const others: Record<string, string>[] = [{}, { cookie: 'paddock_session_3000=forged.jwt.value' }, { 'x-api-key': 'pdk_test_key_0123456789abcdef' }];
    for (const other of others) {
      const headers = { host: 'localhost:3000', ...other };
      expect((await handleFileDownload(new Request('http://localhost:3000/files/x', { headers }), f.id, rt)).status).toBe(401);
    }
    expect((await handleFileDownload(new Request('http://localhost:3000/files/x', { headers: { host: 'localhost:3000', cookie } }), 'file_01JZZZZZZZZZZZZZZZZZZZZZZZ', rt)).status).toBe(404);
    expect((await handleFileDownload(new Request('http://localhost:3000/files/x', { headers: { host: 'localhost:3000', cookie } }), '../etc/passwd', rt)).status).toBe(404);
  });
});
