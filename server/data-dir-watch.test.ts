import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataDirWatch, currentDataDirWatch, setDataDirWatch } from '~/server/data-dir-watch';
import { healthAnswer } from '~/server/health';
import { stopRuntime } from '~/server/shutdown';
import { type Runtime, getRuntime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

let dir: string;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  setDataDirWatch(null);
  fs.rmSync(dir, { recursive: true, force: true });
});

async function health(): Promise<{ status: number; body: { status: string; checks: { data_dir: string }; problems?: string[] } }> {
  const res = healthAnswer();
  return { status: res.status, body: (await res.json()) as never };
}

describe('data directory watch', () => {
  it('notices the data dir deleted under a running server: health says so and a write fails with a clear error', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-datadir-watch-'));
    const dataDir = path.join(dir, 'data');
    // The real start (runtime.ts) on this data dir, without sandbox hands.
    Object.assign(process.env, { PADDOCK_DATA_DIR: dataDir, PADDOCK_WARM_POOL: '0', PADDOCK_DEFAULT_HAND: 'memory', PADDOCK_WORKSPACES_DIR: path.join(dir, 'ws') });
    const rt: Runtime = await getRuntime();
    cleanups.push(async () => {
      await stopRuntime(rt);
      await rt.gitProxy?.close();
      await rt.store.close();
    });
    await rt.store.createSession({});
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok', checks: { data_dir: 'ok' } } });

    fs.rmSync(dataDir, { recursive: true, force: true });

    expect(await health()).toMatchObject({ status: 503, body: { status: 'failing', checks: { data_dir: 'missing' }, problems: [expect.stringContaining('data directory was deleted')] } });
    expect(JSON.stringify((await health()).body)).not.toContain(dataDir);
    const write = rt.store.createSession({});
    await expect(write).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(write).rejects.toThrow(/data directory was deleted while the server was running: nothing more can be saved/);
    // A write that was refused is not in the (deleted) database either.
    expect((await rt.store.listSessions({ limit: 10 })).data).toHaveLength(1);
  });

  it('refuses a write the moment the database file is deleted, before any periodic check ran', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-datadir-watch-'));
    const file = path.join(dir, 'paddock.sqlite');
    const watch = new DataDirWatch({ dir, files: [file] });
    const store = await openSqliteStore({ file, beforeWrite: () => watch.assertWritable() });
    cleanups.push(() => store.close());
    await store.createSession({});
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    const write = store.createSession({});
    await expect(write).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(write).rejects.toThrow(/database or the master key\) was deleted or replaced/);
    expect(watch.problem?.kind).toBe('replaced');
  });

  it('reports an unwritable data dir and lets writes go on once it is writable again', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-datadir-watch-'));
    const watch = new DataDirWatch({ dir, files: [] });
    setDataDirWatch(watch);
    expect(currentDataDirWatch()).toBe(watch);
    // A read-only folder for root too: the probe file's name taken by a folder it cannot replace.
    fs.mkdirSync(path.join(dir, '.paddock-write-probe'));
    fs.writeFileSync(path.join(dir, '.paddock-write-probe', 'x'), '');
    expect(await health()).toMatchObject({ status: 503, body: { checks: { data_dir: 'unwritable' } } });
    expect(() => watch.assertWritable()).toThrow(/cannot be written/);
    fs.rmSync(path.join(dir, '.paddock-write-probe'), { recursive: true });
    // The next full check (the ticker's, every 2 s) finds it writable again.
    expect(watch.check()).toBeNull();
    expect(await health()).toMatchObject({ status: 200, body: { checks: { data_dir: 'ok' } } });
    expect(() => watch.assertWritable()).not.toThrow();
  });
});

describe('health check', () => {
  it('writes its probe file at most once a second however often it is asked, and still sees a deletion at once', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-datadir-watch-'));
    const file = path.join(dir, 'paddock.sqlite');
    fs.writeFileSync(file, '');
    const watch = new DataDirWatch({ dir, files: [file] });
    setDataDirWatch(watch);
    const writes = vi.spyOn(fs, 'writeFileSync');
    for (let i = 0; i < 50; i++) expect(healthAnswer().status).toBe(200);
    expect(writes.mock.calls.filter(([p]) => String(p).endsWith('.paddock-write-probe'))).toHaveLength(1);
    writes.mockRestore();
    fs.rmSync(file);
    expect(healthAnswer().status).toBe(503);
  });
});
