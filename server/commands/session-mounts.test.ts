import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NEVER_LOST } from '~/lib/hand';
import { deleteFile, downloadFile, uploadFile } from '~/server/commands/file-commands';
import { sessionMounts } from '~/server/commands/session-mounts';
import { DirBlobStore } from '~/server/files/dir-blob-store';
import { FileStore } from '~/server/files/file-store';
import { SessionFileStore } from '~/server/files/session-files';
import { DirMountPoint } from '~/server/hands/dir-mounts';
import { withMounts } from '~/server/hands/hand-mounts';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';

let dir: string;
let store: SqliteSessionStore;
let deps: Parameters<typeof sessionMounts>[0] & { sessionFiles: SessionFileStore };
let point: DirMountPoint;
let sessionId: string;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-session-mounts-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  deps = { files: new FileStore(store.db), blobs: new DirBlobStore(path.join(dir, 'blobs')), sessionFiles: new SessionFileStore(store.db), maxOutputBytes: 1024 * 1024 };
  point = new DirMountPoint(path.join(dir, 'hand', 'mnt'));
  sessionId = (await store.createSession({})).id;
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const upload = (name: string, bytes: Buffer) => uploadFile(deps, { filename: name, mimeType: 'application/octet-stream', source: Readable.from([bytes]), maxBytes: 1 << 20, fields: Promise.resolve({}) });
const hand = () => ({ id: 'sandbox-1', kind: 'sandbox' as const, lost: NEVER_LOST, tools: () => Promise.resolve([]), execute: () => Promise.resolve(''), close: () => Promise.resolve(), mountPoint: point });
/** One tool call on the hand: mounts placed before, outputs collected after. */
const call = (during: () => void = () => undefined) => withMounts(sessionMounts(deps), sessionId, 'sandbox-1', hand(), () => Promise.resolve(during()));
const uploads = () => path.join(dir, 'hand', 'mnt', 'session', 'uploads');
const outputs = () => path.join(dir, 'hand', 'mnt', 'session', 'outputs');
const outputFiles = async () => (await deps.files.list({ limit: 100, scopeId: sessionId })).data;
async function bytesOf(id: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of (await downloadFile(deps, id)).body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe("a session's mounts in a hand", () => {
  it("places the session's files read-only at their mount paths before a call, and removes one taken away", async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13]);
    const f = await upload('a.bin', bytes);
    const [r] = await deps.sessionFiles.add(sessionId, [{ type: 'file', file_id: f.id, mount_path: '/mnt/session/uploads/data/a.bin' }]);
    await call();
    const placed = path.join(uploads(), 'data', 'a.bin');
    expect(fs.readFileSync(placed)).toEqual(bytes);
    expect(fs.statSync(placed).mode & 0o777).toBe(0o444);
    // A file deleted from the Files API is unmounted at the next call, as one taken off the session.
    const g = await upload('g.bin', Buffer.from('gone soon'));
    await deps.sessionFiles.add(sessionId, [{ type: 'file', file_id: g.id, mount_path: '/mnt/session/uploads/g.bin' }]);
    await call();
    expect(fs.readFileSync(path.join(uploads(), 'g.bin'), 'utf8')).toBe('gone soon');
    await deleteFile(deps, g.id);
    await call();
    expect(fs.existsSync(path.join(uploads(), 'g.bin'))).toBe(false);
    await deps.sessionFiles.remove(sessionId, r!.id);
    await call();
    expect(fs.existsSync(placed)).toBe(false);
    expect(fs.readdirSync(uploads())).toEqual([]);
  });

  it('keeps what a call left in the outputs folder as files of the session, byte for byte, once per content', async () => {
    const report = Buffer.from('result\u0000\u00ff'.repeat(1000), 'latin1');
    await call(() => {
      fs.mkdirSync(path.join(outputs(), 'reports'), { recursive: true });
      fs.writeFileSync(path.join(outputs(), 'reports', 'r.bin'), report);
    });
    const [kept, ...more] = await outputFiles();
    expect(more).toEqual([]);
    expect(kept).toMatchObject({ filename: 'reports/r.bin', size_bytes: report.length, scope: { type: 'session', id: sessionId } });
    expect(await bytesOf(kept!.id)).toEqual(report);
    // A call that changed nothing keeps nothing new.
    await call();
    expect(await outputFiles()).toEqual([kept]);
    // A changed output replaces the earlier file of that name.
    await call(() => fs.writeFileSync(path.join(outputs(), 'reports', 'r.bin'), 'v2'));
    const [v2, ...rest] = await outputFiles();
    expect(rest).toEqual([]);
    expect(v2!.id).not.toBe(kept!.id);
    expect((await bytesOf(v2!.id)).toString()).toBe('v2');
  });

  it('collects the outputs of a failed call too, and never follows a link the hand made', async () => {
    const secret = path.join(dir, 'server-secret.txt');
    fs.writeFileSync(secret, 'do not leak');
    await expect(
      call(() => {
        fs.mkdirSync(outputs(), { recursive: true });
        fs.symlinkSync(secret, path.join(outputs(), 'link.txt'));
        fs.symlinkSync(dir, path.join(outputs(), 'dirlink'));
        fs.writeFileSync(path.join(outputs(), 'partial.txt'), 'half');
        throw new Error('the command failed');
      }),
    ).rejects.toThrow('the command failed');
    expect((await outputFiles()).map((f) => f.filename)).toEqual(['partial.txt']);
  });
});
