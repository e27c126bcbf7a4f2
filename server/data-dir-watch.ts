import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { StoreUnavailableError } from '~/lib/errors';
import { logger } from '~/server/log';

const log = logger('data-dir');

/**
 * What is wrong with the data directory while the server runs. SQLite keeps writing into a
 * database whose folder was deleted (the open file lives on, unlinked), and the next start finds
 * nothing: every session, key and vault gone. So the folder and the files in it are watched.
 */
export type DataDirProblemKind = 'missing' | 'replaced' | 'unwritable';

export interface DataDirProblem {
  kind: DataDirProblemKind;
  /** Since when (ms). */
  since: number;
}

/** One sentence per problem, without the folder's path (strangers of a widget may read it). */
export const DATA_DIR_SENTENCE: Record<DataDirProblemKind, string> = {
  missing: "Paddock's data directory was deleted while the server was running",
  replaced: "a file in Paddock's data directory (the database or the master key) was deleted or replaced while the server was running",
  unwritable: "Paddock's data directory cannot be written",
};

/**
 * A write refused because the data directory is gone or unwritable: the store's "unavailable"
 * error (503 at both edges, retried by the harness), with a message saying why, never a write into
 * a deleted file.
 */
export class DataDirError extends StoreUnavailableError {
  constructor(readonly kind: DataDirProblemKind) {
    super('sqlite', `data directory ${kind}`);
    this.message = `${DATA_DIR_SENTENCE[kind]}: nothing more can be saved until it is restored and Paddock restarted`;
  }
}

const PROBE = '.paddock-write-probe';

export class DataDirWatch {
  readonly #dir: string;
  readonly #files: string[];
  /** A file once seen must stay that same file (device + inode). */
  readonly #seen = new Map<string, string>();
  #problem: DataDirProblem | null = null;
  #checkedAt = 0;

  constructor(o: { dir: string; files: string[] }) {
    this.#dir = o.dir;
    this.#files = o.files;
  }

  get dir(): string {
    return this.#dir;
  }

  get problem(): DataDirProblem | null {
    return this.#problem;
  }

  /**
   * A full check (the folder, its files, and a write of a probe file), for the ticker and health.
   * `maxAgeMs`: no probe write if the last was that recent (health answers strangers: no write per request).
   */
  check(maxAgeMs = 0): DataDirProblem | null {
    const now = Date.now();
    if (maxAgeMs > 0 && now - this.#checkedAt < maxAgeMs) {
      // Stats only (a deletion still shows at once); an unwritable folder stays so until the next probe.
      return this.#set(this.#inspect(false) ?? (this.#problem?.kind === 'unwritable' ? 'unwritable' : null));
    }
    this.#checkedAt = now;
    return this.#set(this.#inspect(true));
  }

  /**
   * Before a database write: cheap (a stat per watched file), so it runs on every write and the
   * window between a deletion and the refusal is one write, not one tick.
   */
  assertWritable(): void {
    const kind = this.#problem?.kind ?? this.#set(this.#inspect(false))?.kind;
    if (kind) throw new DataDirError(kind);
  }

  /** Checks every `intervalMs` (unref'd); returns the stop. */
  start(intervalMs = 2_000): () => void {
    this.check();
    const timer = setInterval(() => this.check(), intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  #inspect(probe: boolean): DataDirProblemKind | null {
    if (!isDir(this.#dir)) return 'missing';
    for (const file of this.#files) {
      const id = fileId(file);
      const known = this.#seen.get(file);
      if (known === undefined) {
        if (id !== null) this.#seen.set(file, id);
      } else if (id !== known) return 'replaced';
    }
    if (probe && !canWrite(this.#dir)) return 'unwritable';
    return null;
  }

  #set(kind: DataDirProblemKind | null): DataDirProblem | null {
    const was = this.#problem;
    if (kind === null) {
      if (was) log.info('data directory usable again', { dataDir: this.#dir, was: was.kind });
      this.#problem = null;
      return null;
    }
    if (was?.kind === kind) return was;
    this.#problem = { kind, since: Date.now() };
    // Loud on purpose: an operator reading the log must not miss it.
    log.error(`DATA DIRECTORY PROBLEM: ${DATA_DIR_SENTENCE[kind]}; writes are refused until it is fixed`, {
      dataDir: this.#dir,
      problem: kind,
      // A deleted database lives on while this process holds it open: copy it out before stopping.
      ...(kind === 'unwritable' ? {} : { rescue: `the open files are under /proc/${process.pid}/fd (ls -l shows them as "(deleted)"); copy paddock.sqlite (and -wal) from there before stopping` }),
    });
    return this.#problem;
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(/*turbopackIgnore: true*/ p).isDirectory();
  } catch {
    return false;
  }
}

function fileId(p: string): string | null {
  try {
    const st = fs.statSync(/*turbopackIgnore: true*/ p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

function canWrite(dir: string): boolean {
  const probe = path.join(dir, PROBE);
  try {
    fs.writeFileSync(/*turbopackIgnore: true*/ probe, '', { mode: 0o600 });
    fs.rmSync(/*turbopackIgnore: true*/ probe, { force: true });
    return true;
  } catch {
    return false;
  }
}

/** The process's watch (on globalThis: route handlers and instrumentation are separate module copies). */
const KEY = Symbol.for('paddock.dataDirWatch');
type Holder = { [KEY]?: DataDirWatch };

export function setDataDirWatch(watch: DataDirWatch | null): void {
  if (watch) (globalThis as Holder)[KEY] = watch;
  else delete (globalThis as Holder)[KEY];
}

export function currentDataDirWatch(): DataDirWatch | null {
  return (globalThis as Holder)[KEY] ?? null;
}
