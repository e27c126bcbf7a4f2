import 'client-only';

/**
 * The browser hand's execution engine: the WebContainer (real Node.js in the tab) or the offline
 * engine (just-bash + a QuickJS `node`, in a Web Worker). Both implement the same six tools with
 * the same input fields as `lib/tools.ts` and the same result conventions as paddock-hand
 * (`bash` output ends with `exit code: N`; errors are thrown with a message the model reads).
 */
export type EngineKind = 'webcontainer' | 'offline';

export type EngineTool = 'bash' | 'read' | 'write' | 'edit' | 'glob' | 'grep';

export interface EngineExecuteOptions {
  signal: AbortSignal;
  /** Streams a command's output as it is produced (for the terminal); the result holds it all. */
  onOutput?: (chunk: string) => void;
}

/** One of the session's mounts as the server lists it (lib/mounts.ts), for the tab to place. */
export interface MountEntry {
  /** Absolute, under `/mnt` (`/mnt/session/uploads/x.csv`). */
  mountPath: string;
  version: string;
  readOnly: boolean;
}

/** What a call changed in the mounts, for the server to keep (docs/hands.md). */
export interface MountChanges {
  /** New or changed files under `/mnt/session/outputs/` (path relative to it). */
  outputs: { path: string; bytes: Uint8Array }[];
  /** Memory files changed, added (readSha256 null) or deleted (content null) since they were placed. */
  memory: { mountPath: string; content: string | null; readSha256: string | null }[];
  /** What was left out (too large), one sentence each. */
  skipped: string[];
}

/** The session's mounts inside an engine (absent: an engine that cannot hold them). */
export interface EngineMounts {
  /** Removes what is not in `mounts` any more; returns the paths whose bytes it needs (new, changed, missing). */
  plan(mounts: readonly MountEntry[]): Promise<string[]>;
  place(mount: MountEntry, bytes: Uint8Array): Promise<void>;
  /** Outputs new or changed since the last look, memory changed since placed. */
  changes(): Promise<MountChanges>;
}

export interface BrowserEngine {
  readonly kind: EngineKind;
  /** Why this engine runs, for the UI: "WebContainer booted", "WebContainer did not boot within 8 s (offline?): offline engine". */
  readonly reason: string;
  execute(tool: EngineTool, input: Record<string, unknown>, opts: EngineExecuteOptions): Promise<string>;
  /** Every file in the workspace, relative paths, sorted (for the file tree). */
  listFiles(): Promise<string[]>;
  readFile(path: string): Promise<string>;
  writeFile(path: string, content: string): Promise<void>;
  /** Called after anything may have changed files (a tool ran, a user edit). */
  onFilesChanged(cb: () => void): () => void;
  /** Dev servers started in the WebContainer (never fires for the offline engine). */
  onPreview(cb: (url: string, port: number) => void): () => void;
  dispose(): void;
  /** Where the session's mounts go (`/mnt`, beside the workspace); absent: this engine gets none. */
  readonly mounts?: EngineMounts;
}

export interface StartEngineOptions {
  /** The workspace is per session: the offline engine persists it to IndexedDB under this key. */
  sessionId: string;
  /** WebContainer boot never settles offline: give up after this long (default 8000 ms). */
  bootTimeoutMs?: number;
  /** Force an engine (tests, and when the page is not cross-origin isolated). */
  prefer?: EngineKind;
  /** Progress for the UI while starting. */
  onStatus?: (status: string) => void;
  /** Limits for `node` in the offline engine. */
  nodeTimeLimitMs?: number;
  nodeMemoryLimitBytes?: number;
}
