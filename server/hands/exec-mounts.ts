import 'server-only';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Hand } from '~/lib/hand';
import { type Mount, MEMORY_MOUNTS, MOUNTS_ROOT, SESSION_MOUNT_ROOTS, SESSION_OUTPUTS, mountSegments, underRoot } from '~/lib/mounts';
import type { HandMountPoint, MemoryChange, OutputFile } from '~/server/hands/mount-port';
import { logger } from '~/server/log';

const log = logger('mounts');

/** One shell word: nothing in it is expanded. */
const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** Bytes per command each way: a written chunk stays well under one argument's 128 KB (`bash -c`), a read one under bash's 30,000-character output cap. */
const WRITE_CHUNK = 48 * 1024;
const READ_CHUNK = 15_000;
/** Copies through a shell are slow: larger mounts and outputs are left out (logged). */
export const EXEC_MOUNT_MAX_BYTES = 16 * 1024 * 1024;
/** A memory file is read back up to this (the store refuses far less: its error then names the file). */
const MAX_MEMORY_READ = 1024 * 1024;
/** At most this many files are looked at per call, as a sandbox hand does. */
const MAX_LISTED = 1000;

async function bytesOf(m: Mount, max: number): Promise<Buffer | null> {
  const s = m.source;
  if ('contents' in s) return Buffer.from(s.contents);
  if ('hostPath' in s) throw new Error('a host path cannot be copied into a hand on another machine');
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of await s.open()) {
    size += c.byteLength;
    if (size > max) return null;
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

/**
 * A hand's mounts copied through its own `bash` tool (a remote paddock-hand on another machine):
 * files written in base64 chunks before the hand's next call, outputs listed with `find` and read
 * back in chunks. Its user must be able to create `/mnt/session` (hand/Dockerfile makes it so).
 * Read-only is a file mode here (0444), not a mount: the hand's user could change it back, which
 * is why a memory store's write-back checks the store's access on the server, not this mode.
 * What the agent changed under `/mnt/memory/` is found by SHA-256 after each call and read back.
 * A hand without a bash tool gets no mounts.
 */
export class ExecMountPoint implements HandMountPoint {
  private readonly placed = new Map<string, string>();
  private readonly seen = new Map<string, string>();
  private hasBash: Promise<boolean> | null = null;

  constructor(
    private readonly hand: Pick<Hand, 'id' | 'execute' | 'tools'>,
    /** Where `/mnt` is in the hand (tests use a folder of their own). */
    private readonly root = MOUNTS_ROOT,
    private readonly maxBytes = EXEC_MOUNT_MAX_BYTES,
  ) {}

  private at(mountPath: string): string {
    return this.root + mountPath.slice(MOUNTS_ROOT.length);
  }

  /** Runs a command; its output without the trailer, or an Error when it did not exit 0. */
  private async bash(command: string): Promise<string> {
    const out = await this.hand.execute('bash', { command }, { callId: `mounts-${randomUUID()}`, signal: AbortSignal.timeout(120_000) });
    const m = /(?:^|\n)exit code: (\d+)\s*$/.exec(out);
    if (!m || m[1] !== '0') throw new Error(`mount command failed on ${this.hand.id}: ${out.slice(-300)}`);
    return out.slice(0, m.index);
  }

  private usable(): Promise<boolean> {
    this.hasBash ??= this.hand.tools().then((t) => t.some((x) => x.name === 'bash'), () => false);
    return this.hasBash;
  }

  async sync(mounts: readonly Mount[]): Promise<void> {
    if (!(await this.usable())) return;
    for (const root of SESSION_MOUNT_ROOTS) await this.bash(`mkdir -p ${shellQuote(this.at(root.mountPath))}`);
    for (const root of SESSION_MOUNT_ROOTS.filter((r) => r.placed)) {
      const dir = this.at(root.mountPath);
      const wanted = new Map<string, Mount>();
      for (const m of mounts) {
        const rel = underRoot(root.mountPath, m.mountPath);
        if (rel !== null && mountSegments(rel) !== null) wanted.set(rel, m);
      }
      const present = (await this.bash(`cd ${shellQuote(dir)} && find . -type f -printf '%P\\n'`)).split('\n').filter(Boolean);
      const gone = present.filter((p) => !wanted.has(p));
      if (gone.length > 0) await this.bash(`cd ${shellQuote(dir)} && rm -f -- ${gone.map(shellQuote).join(' ')} && find . -mindepth 1 -type d -empty -delete`);
      for (const p of gone) this.placed.delete(`${root.mountPath}/${p}`);
      for (const [rel, m] of wanted) {
        if (m.version !== undefined && this.placed.get(m.mountPath) === m.version && present.includes(rel)) continue;
        const bytes = await bytesOf(m, this.maxBytes);
        if (bytes === null) {
          log.warn('mount too large to copy into the hand', { hand: this.hand.id, mount: m.mountPath, max: this.maxBytes });
          continue;
        }
        const file = `${dir}/${rel}`;
        const tmp = shellQuote(`${file}.paddock-part`);
        await this.bash(`mkdir -p ${shellQuote(file.slice(0, file.lastIndexOf('/')))} && rm -f ${tmp} && : > ${tmp}`);
        for (let at = 0; at < bytes.length; at += WRITE_CHUNK) {
          await this.bash(`printf %s ${shellQuote(bytes.subarray(at, at + WRITE_CHUNK).toString('base64'))} | base64 -d >> ${tmp}`);
        }
        await this.bash(`chmod ${m.readOnly ? 444 : 644} ${tmp} && mv -f ${tmp} ${shellQuote(file)}`);
        if (m.version !== undefined) this.placed.set(m.mountPath, m.version);
      }
    }
  }

  async changedOutputs(): Promise<OutputFile[]> {
    if (!(await this.usable())) return [];
    const dir = this.at(SESSION_OUTPUTS);
    const listing = await this.bash(`mkdir -p ${shellQuote(dir)} && cd ${shellQuote(dir)} && find . -type f -printf '%s %T@ %P\\n' | head -n 1000`);
    const changed: OutputFile[] = [];
    for (const line of listing.split('\n')) {
      const m = /^(\d+) (\S+) (.+)$/.exec(line);
      if (!m || mountSegments(m[3]!) === null) continue;
      const [size, stamp, rel] = [Number(m[1]), `${m[1]}:${m[2]}`, m[3]!];
      if (this.seen.get(rel) === stamp) continue;
      this.seen.set(rel, stamp);
      if (size > this.maxBytes) {
        log.warn('output too large to copy out of the hand', { hand: this.hand.id, path: rel, size, max: this.maxBytes });
        continue;
      }
      changed.push({ path: rel, size, open: () => Promise.resolve(Readable.from(this.read(`${dir}/${rel}`, size))) });
    }
    return changed;
  }

  /**
   * What the agent changed under the memory stores since they were placed: each file whose SHA-256
   * is not what was placed there, and each placed file gone (as the sandbox's DirMountPoint does).
   * A changed path is copied again at the next sync from what the store then holds.
   */
  async changedMemory(): Promise<MemoryChange[]> {
    if (!(await this.usable())) return [];
    const dir = this.at(MEMORY_MOUNTS);
    // sha256sum marks a name it had to escape (a newline, a backslash) with a leading `\`: no memory path has one.
    const listing = await this.bash(`mkdir -p ${shellQuote(dir)} && cd ${shellQuote(dir)} && find . -type f -print0 | head -z -n ${MAX_LISTED} | xargs -0 -r sha256sum`);
    const now = new Map<string, string>();
    for (const line of listing.split('\n')) {
      const m = /^([0-9a-f]{64}) [ *]\.\/(.+)$/.exec(line);
      if (m && mountSegments(m[2]!) !== null) now.set(`${MEMORY_MOUNTS}/${m[2]!}`, m[1]!);
    }
    const changes: MemoryChange[] = [];
    for (const [mountPath, sha] of now) {
      const readSha256 = this.placed.get(mountPath) ?? null;
      if (sha === readSha256) continue;
      const file = this.at(mountPath);
      const size = Number((await this.bash(`stat -c %s ${shellQuote(file)}`)).trim());
      // Past the cap, a prefix goes back: the store refuses it by size and the refusal names the file.
      const chunks: Buffer[] = [];
      for await (const c of this.read(file, Math.min(size, MAX_MEMORY_READ + 1))) chunks.push(c);
      changes.push({ mountPath, content: Buffer.concat(chunks).toString('utf8'), readSha256 });
    }
    for (const [mountPath, sha] of this.placed) {
      if (mountPath.startsWith(`${MEMORY_MOUNTS}/`) && !now.has(mountPath)) changes.push({ mountPath, content: null, readSha256: sha });
    }
    for (const c of changes) this.placed.delete(c.mountPath);
    return changes;
  }

  private async *read(file: string, size: number): AsyncGenerator<Buffer> {
    for (let at = 0; at < size; at += READ_CHUNK) {
      const b64 = await this.bash(`tail -c +${at + 1} ${shellQuote(file)} | head -c ${READ_CHUNK} | base64 -w0`);
      yield Buffer.from(b64.trim(), 'base64');
    }
  }
}
