import 'client-only';
import type { WebContainer } from '@webcontainer/api';
import { ToolError } from '~/lib/hand';
import type { BrowserEngine, EngineExecuteOptions, EngineTool, StartEngineOptions } from '~/lib/browser/engine/types';
import { bashCall, formatBashResult, type BashEnd } from '~/lib/workspace-tools/bash-rules';
import { WorkspaceTools } from '~/lib/workspace-tools/file-tools';
import type { EntryKind, ToolFs } from '~/lib/workspace-tools/tool-fs';
import { Listeners } from '~/lib/browser/engine/listeners';

/**
 * The WebContainer engine: real Node.js (StackBlitz's runtime) in the tab. `@webcontainer/api`
 * does not contain the runtime: boot() loads it in an iframe from StackBlitz's hosts and, when
 * they cannot be reached, never settles (no error, no timeout), so boot is raced against a
 * timeout. It needs a cross-origin isolated page (COOP + COEP), runs once per page, and
 * commercial production use needs a StackBlitz licence key (NEXT_PUBLIC_STACKBLITZ_API_KEY,
 * passed to configureAPIKey).
 */

export const DEFAULT_BOOT_TIMEOUT_MS = 8000;

/** One WebContainer per page. A boot that never settles stays here: boot() holds a lock anyway. */
let booting: Promise<WebContainer> | null = null;

function bootOnce(): Promise<WebContainer> {
  booting ??= (async () => {
    const api = await import('@webcontainer/api');
    const key = process.env.NEXT_PUBLIC_STACKBLITZ_API_KEY;
    if (key) api.configureAPIKey(key);
    return api.WebContainer.boot({ coep: await pageCoep(), workdirName: 'paddock' });
  })();
  // A boot that failed outright may be retried by the next engine start.
  booting.catch(() => {
    booting = null;
  });
  return booting;
}

/** boot()'s `coep` must match the page's own Cross-Origin-Embedder-Policy header. */
async function pageCoep(): Promise<'require-corp' | 'credentialless' | 'none'> {
  try {
    const res = await fetch(location.href, { method: 'HEAD', cache: 'no-store' });
    const value = res.headers.get('cross-origin-embedder-policy') ?? '';
    if (value.includes('credentialless')) return 'credentialless';
    if (value.includes('require-corp')) return 'require-corp';
  } catch {
    // fall through: assume the common setting
  }
  return 'require-corp';
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

export interface StartWebContainerOptions extends StartEngineOptions {
  /** Attempt boot even when the page is not cross-origin isolated (it then never settles here). */
  ignoreIsolation?: boolean;
}

/** Rejects with a reason for the UI ("WebContainer did not boot within 8 s (…)") when it cannot run. */
export async function startWebContainerEngine(opts: StartWebContainerOptions): Promise<BrowserEngine> {
  if (!globalThis.crossOriginIsolated && !opts.ignoreIsolation) {
    throw new Error('this page is not cross-origin isolated (WebContainer needs COOP and COEP headers)');
  }
  const timeoutMs = opts.bootTimeoutMs ?? DEFAULT_BOOT_TIMEOUT_MS;
  let wc: WebContainer;
  try {
    wc = await withTimeout(
      bootOnce(),
      timeoutMs,
      `WebContainer did not boot within ${seconds(timeoutMs)} (its runtime loads from StackBlitz, which cannot be reached)`,
    );
  } catch (e) {
    const message = (e as Error).message;
    throw new Error(message.startsWith('WebContainer') ? message : `WebContainer failed to boot: ${message}`, { cause: e });
  }
  const dir = `sessions/${opts.sessionId.replace(/[^\w.-]/g, '_')}`;
  await wc.fs.mkdir(dir, { recursive: true });
  return new WebContainerEngine(wc, dir);
}

/** Terminal control sequences (colours, cursor moves, titles) in jsh's pty output. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*(?:\u0007|\u001b\\)|\u001b[()][A-Z0-9]/g;

class WebContainerEngine implements BrowserEngine {
  readonly kind = 'webcontainer' as const;
  readonly reason = 'WebContainer booted';
  private readonly tools: WorkspaceTools;
  private readonly changed = new Listeners();
  private readonly unsubscribe: Array<() => void> = [];
  private readonly running = new Set<{ kill(): void }>();

  constructor(
    private readonly wc: WebContainer,
    /** The session's folder, relative to the WebContainer's workdir. */
    private readonly dir: string,
  ) {
    // Tool paths are absolute in a virtual tree rooted at "/", mapped onto the workdir.
    this.tools = new WorkspaceTools(this.toolFs(), `/${dir}`);
  }

  async execute(tool: EngineTool, input: Record<string, unknown>, opts: EngineExecuteOptions): Promise<string> {
    try {
      return await (tool === 'bash' ? this.bash(input, opts) : this.tools.run(tool, input));
    } finally {
      if (tool === 'bash' || tool === 'write' || tool === 'edit') this.changed.emit();
    }
  }

  private async bash(input: Record<string, unknown>, opts: EngineExecuteOptions): Promise<string> {
    const { command, timeout } = bashCall(input);
    if (opts.signal.aborted) throw new ToolError('bash: cancelled before it started');
    const proc = await this.wc.spawn('jsh', ['-c', command], { cwd: this.dir, terminal: { cols: 200, rows: 50 } });
    this.running.add(proc);
    let output = '';
    const pump = proc.output.pipeTo(
      new WritableStream<string>({
        write: (chunk) => {
          output += chunk;
          opts.onOutput?.(chunk);
        },
      }),
    );
    let end: BashEnd | null = null;
    const timer = setTimeout(() => {
      end = { kind: 'timeout', timeoutMs: timeout };
      proc.kill();
    }, timeout);
    const onAbort = () => {
      end ??= { kind: 'cancelled' };
      proc.kill();
    };
    opts.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const code = await proc.exit;
      // Output still in flight when the process exits: take what arrives shortly after.
      await Promise.race([pump.catch(() => undefined), new Promise((r) => setTimeout(r, 100))]);
      const text = output.replace(ANSI, '').replace(/\r\n?/g, '\n');
      return formatBashResult(text, end ?? { kind: 'exit', code });
    } finally {
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      this.running.delete(proc);
    }
  }

  listFiles(): Promise<string[]> {
    return this.tools.listFiles();
  }

  readFile(path: string): Promise<string> {
    return this.tools.readFile(path);
  }

  async writeFile(path: string, content: string): Promise<void> {
    try {
      await this.tools.write({ path, content });
    } finally {
      this.changed.emit();
    }
  }

  onFilesChanged(cb: () => void): () => void {
    return this.changed.add(cb);
  }

  onPreview(cb: (url: string, port: number) => void): () => void {
    const off = this.wc.on('server-ready', (port, url) => cb(url, port));
    this.unsubscribe.push(off);
    return off;
  }

  /** Stops this engine's processes; the WebContainer itself lives on (one per page). */
  dispose(): void {
    for (const p of this.running) p.kill();
    this.running.clear();
    for (const off of this.unsubscribe.splice(0)) off();
    this.changed.clear();
  }

  /** wc.fs has no stat: a kind comes from the parent's listing, a size from reading the file. */
  private toolFs(): ToolFs {
    const fs = this.wc.fs;
    const rel = (abs: string) => abs.replace(/^\/+/, '') || '.';
    const entryKind = async (abs: string): Promise<EntryKind | null> => {
      if (abs === '/') return 'dir';
      const parent = abs.slice(0, abs.lastIndexOf('/')) || '/';
      const name = abs.slice(abs.lastIndexOf('/') + 1);
      try {
        const entries = await fs.readdir(rel(parent), { withFileTypes: true });
        const e = entries.find((x) => x.name === name);
        return e ? (e.isDirectory() ? 'dir' : e.isFile() ? 'file' : 'other') : null;
      } catch {
        return null;
      }
    };
    const stat = async (abs: string) => {
      const kind = await entryKind(abs);
      if (kind === null) return null;
      const size = kind === 'file' ? (await fs.readFile(rel(abs))).byteLength : 0;
      return { kind, size };
    };
    return {
      lstat: stat,
      stat,
      readBytes: (abs) => fs.readFile(rel(abs)),
      writeText: async (abs, content) => {
        const parent = abs.slice(0, abs.lastIndexOf('/'));
        if (parent) await fs.mkdir(rel(parent), { recursive: true });
        await fs.writeFile(rel(abs), content);
      },
      list: async (abs) =>
        (await fs.readdir(rel(abs), { withFileTypes: true })).map((e) => ({
          name: e.name,
          kind: e.isDirectory() ? ('dir' as const) : e.isFile() ? ('file' as const) : ('other' as const),
        })),
    };
  }
}
