import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import { afterEach, beforeEach, expect } from 'vitest';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

/** A fresh runtime (SQLite in a temp dir, the demo brain, memory hands) for each test of the file. */
export function demoRuntimePerTest(prefix: string): () => Runtime {
  let dir: string;
  let rt: Runtime | undefined;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
    rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir });
  });
  afterEach(async () => {
    await rt?.harness.close();
    await rt?.store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (!rt) throw new Error('demoRuntimePerTest: used outside a test');
    return rt;
  };
}

/** The TRPCError a call was refused with (fails the test if it succeeded or threw anything else). */
export async function rejection(p: Promise<unknown>): Promise<TRPCError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TRPCError);
  return e as TRPCError;
}
