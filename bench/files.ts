import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { startApiServer } from '~/bench/api-server';
import { percentile } from '~/bench/stats';
import { Rows, type Row, ms, runIfMain } from '~/bench/table';
import { sessionMounts } from '~/server/commands/session-mounts';
import { loadConfig } from '~/server/config';
import { DirMountPoint } from '~/server/hands/dir-mounts';
import { memoryResourcesFor } from '~/server/memory/session-memory';
import { filesFor } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

/**
 * Issue 26's bytes: a 1 GiB file up and down through /v1/files on loopback (streamed both ways:
 * the process's RSS must stay flat while it moves), and what a memory store of 100 files adds to
 * a hand's first call (placing it in the hand's mount folder) and to a later one (nothing changed).
 */
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const SIZE = Number(process.env.PADDOCK_BENCH_FILE_BYTES ?? GiB);
const CHUNK = 1 * MiB;

const rssMb = () => process.memoryUsage().rss / MiB;

/** Samples this process's RSS while `fn` runs: its peak over the value at the start. */
async function rssGrowth<T>(fn: () => Promise<T>): Promise<{ value: T; growthMb: number }> {
  const start = rssMb();
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, rssMb())), 20);
  try {
    const value = await fn();
    return { value, growthMb: Math.max(peak, rssMb()) - start };
  } finally {
    clearInterval(timer);
  }
}

/** A multipart body with one `file` part of `size` bytes, generated as it is sent. */
function multipart(size: number, boundary: string): Readable {
  const chunk = Buffer.alloc(CHUNK, 0x61);
  function* parts() {
    yield Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`);
    for (let sent = 0; sent < size; sent += CHUNK) yield sent + CHUNK <= size ? chunk : chunk.subarray(0, size - sent);
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return Readable.from(parts());
}

async function transfer(table: Rows): Promise<void> {
  process.env.PADDOCK_MAX_UPLOAD_BYTES = String(SIZE + MiB);
  const server = await startApiServer('files', () => ({ kind: 'message', steps: [{ kind: 'text', text: 'ok' }] }));
  try {
    const base = server.client.baseURL.replace(/\/$/, '');
    const headers = { 'x-api-key': server.client.apiKey ?? '', 'anthropic-version': '2023-06-01' };
    const boundary = `paddock-bench-${Date.now()}`;
    const t0 = performance.now();
    const up = await rssGrowth(async () => {
      const res = await fetch(`${base}/v1/files`, {
        method: 'POST',
        headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: Readable.toWeb(multipart(SIZE, boundary)) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string; size_bytes: number };
    });
    const upMs = performance.now() - t0;
    if (up.value.size_bytes !== SIZE) throw new Error(`upload stored ${up.value.size_bytes} bytes of ${SIZE}`);
    const t1 = performance.now();
    const down = await rssGrowth(async () => {
      const res = await fetch(`${base}/v1/files/${up.value.id}/content`, { headers });
      if (res.status !== 200 || !res.body) throw new Error(`download: ${res.status}`);
      let n = 0;
      for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) n += c.byteLength;
      return n;
    });
    const downMs = performance.now() - t1;
    if (down.value !== SIZE) throw new Error(`download gave ${down.value} bytes of ${SIZE}`);
    const size = `${(SIZE / GiB).toFixed(SIZE < GiB ? 2 : 0)} GiB`;
    table.add(`upload ${size} through /v1/files (multipart, loopback): MB/s`, `${(SIZE / MiB / (upMs / 1000)).toFixed(0)} MB/s`);
    table.add(`  process RSS growth during the upload (streamed: flat)`, `${up.growthMb.toFixed(0)} MB`, '≤ 64 MB', up.growthMb <= 64);
    table.add(`download ${size} (/content, streamed): MB/s`, `${(SIZE / MiB / (downMs / 1000)).toFixed(0)} MB/s`);
    table.add(`  process RSS growth during the download`, `${down.growthMb.toFixed(0)} MB`, '≤ 64 MB', down.growthMb <= 64);
  } finally {
    await server.close();
  }
}

async function memoryMount(table: Rows): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-bench-memory-'));
  const store = await openSqliteStore({ file: path.join(dir, 'paddock.sqlite') });
  try {
    const files = filesFor(loadConfig({ ...process.env, PADDOCK_DATA_DIR: dir }), store);
    const mounts = sessionMounts({ ...files, maxOutputBytes: MiB, attachments: { store, ...files } });
    // 100 memories of 100 kB each, the most a memory may hold: a 10 MB store.
    const s = await files.memory.createStore({ name: 'bench notes' });
    const body = 'x'.repeat(100 * 1000 - 10);
    for (let i = 0; i < 100; i++) await files.memory.createMemory(s.id, { path: `/notes/${String(i).padStart(3, '0')}.md`, content: `${i} ${body}`.slice(0, 100 * 1000) }, { type: 'api_actor', api_key_id: 'bench' });
    const resources = memoryResourcesFor([{ type: 'memory_store', memory_store_id: s.id }], new Map([[s.id, s]]));
    const first: number[] = [];
    const again: number[] = [];
    for (let run = 0; run < 5; run++) {
      const sessionId = (await store.createSession({ resources })).id;
      const point = new DirMountPoint(path.join(dir, `hand-${run}`, 'mnt'));
      let t = performance.now();
      await point.sync(await mounts.mountsFor(sessionId));
      first.push(performance.now() - t);
      t = performance.now();
      await point.sync(await mounts.mountsFor(sessionId));
      again.push(performance.now() - t);
    }
    table.add('memory store of 100 files (10 MB) placed for a hand’s first call, p50 of 5', ms(percentile(first, 50)));
    table.add('  a later call with the store unchanged, p50 of 5', ms(percentile(again, 50)));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runFilesBench(): Promise<Row[]> {
  const table = new Rows();
  await transfer(table);
  await memoryMount(table);
  return table.rows;
}

runIfMain(import.meta.url, runFilesBench);
