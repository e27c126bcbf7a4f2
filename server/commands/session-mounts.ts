import 'server-only';
import { createHash } from 'node:crypto';
import type { Mount } from '~/lib/mounts';
import { type AttachmentDeps, sessionMountSources } from '~/server/commands/session-attachments';
import { type MountWriteDeps, writeFromSession } from '~/server/commands/memory-mount-writes';
import { memoryResourcesOf, saveChangesByStore } from '~/server/memory/session-memory';
import { type FileDeps, deleteFile, uploadFile } from '~/server/commands/file-commands';
import type { SessionFileStore } from '~/server/files/session-files';
import type { MemoryChange, OutputFile, SessionMounts } from '~/server/hands/mount-port';
import { errorFields, logger } from '~/server/log';

const log = logger('mounts');

const MIME: Record<string, string> = {
  txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', json: 'application/json', html: 'text/html', xml: 'application/xml', yaml: 'application/yaml', yml: 'application/yaml',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', svg: 'image/svg+xml', webp: 'image/webp', pdf: 'application/pdf', zip: 'application/zip',
};
const mimeOf = (p: string) => MIME[p.slice(p.lastIndexOf('.') + 1).toLowerCase()] ?? 'application/octet-stream';

export interface SessionMountDeps extends FileDeps {
  sessionFiles: Pick<SessionFileStore, 'list'>;
  /** The largest output kept (PADDOCK_MAX_UPLOAD_BYTES, as an upload). */
  maxOutputBytes: number;
  /** Memory stores and skills (absent: only file resources are mounted). */
  attachments?: AttachmentDeps & MountWriteDeps;
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Skill versions never change: their files, unpacked once, are kept for the next call (a few dozen at most). */
const SKILL_CACHE = 64;

/**
 * The session's memory stores and skills as mounts, each file with its content's hash as its
 * version. Memory stores are read at every call (another writer may have changed them); a skill
 * version is unpacked once per server.
 */
async function attachmentMounts(d: AttachmentDeps, sessionId: string, skills: Map<string, Mount[]>): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const src of await sessionMountSources(d, sessionId)) {
    const key = src.origin.type === 'skill' ? `${src.origin.skill_id}@${src.origin.version}:${src.path}` : null;
    let made = key === null ? undefined : skills.get(key);
    if (made === undefined) {
      made = (await src.files()).map((f): Mount => ({ mountPath: `${src.path}/${f.path}`, readOnly: src.readOnly, version: sha256(f.data), source: { contents: f.data } }));
      if (key !== null) {
        if (skills.size >= SKILL_CACHE) skills.delete(skills.keys().next().value!);
        skills.set(key, made);
      }
    }
    mounts.push(...made);
  }
  return mounts;
}

/**
 * A session's side of its hands' mounts: its file resources as read-only mounts (bytes from the
 * blob store), and what its agent left in `/mnt/session/outputs/` kept as Files API files with
 * `scope_id` = the session id, named by their path there. An output whose bytes did not change is
 * not kept twice; a changed one replaces the session's earlier file of that name.
 */
export function sessionMounts(d: SessionMountDeps): SessionMounts {
  const skills = new Map<string, Mount[]>();
  return {
    async mountsFor(sessionId: string): Promise<Mount[]> {
      const resources = await d.sessionFiles.list(sessionId);
      const mounts: Mount[] = d.attachments ? await attachmentMounts(d.attachments, sessionId, skills) : [];
      if (resources.length === 0) return mounts;
      const shas = await d.files.contentsOf(resources.map((r) => r.file_id));
      for (const r of resources) {
        // A file deleted from the Files API after it was attached (or expired) is not mounted any more.
        const sha = shas.get(r.file_id);
        if (sha === undefined) continue;
        mounts.push({ mountPath: r.mount_path, readOnly: true, version: sha, source: { open: () => d.blobs.open(sha) } });
      }
      return mounts;
    },

    async saveMemory(sessionId: string, changes: readonly MemoryChange[]): Promise<string[]> {
      const a = d.attachments;
      if (!a || changes.length === 0) return [];
      const session = await a.store.getSession(sessionId);
      const stores = memoryResourcesOf(session?.resources ?? []);
      return saveChangesByStore(stores, changes, async (store, path, c) => {
        await writeFromSession(a, sessionId, store.memory_store_id, { path, content: c.content, readSha256: c.readSha256 });
        return undefined;
      });
    },

    async saveOutputs(sessionId: string, outputs: readonly OutputFile[]): Promise<void> {
      for (const o of outputs) {
        if (o.size > d.maxOutputBytes) {
          log.warn('output too large to keep', { session: sessionId, path: o.path, size: o.size, max: d.maxOutputBytes });
          continue;
        }
        try {
          const before = await d.files.named(sessionId, o.path);
          const made = await uploadFile(d, { filename: o.path, mimeType: mimeOf(o.path), source: await o.open(), maxBytes: d.maxOutputBytes, fields: Promise.resolve({}), scopeId: sessionId });
          const sha = await d.files.contentOf(made.id);
          const same = before.find((b) => b.sha256 === sha);
          // Unchanged: the earlier file stays (its id is what a client already knows).
          for (const old of same ? [made] : before) await deleteFile(d, old.id);
        } catch (e) {
          log.warn('output not kept', { session: sessionId, path: o.path, ...errorFields(e) });
        }
      }
    },
  };
}
