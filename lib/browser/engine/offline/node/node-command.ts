import 'client-only';
import { defineCommand, type Command } from 'just-bash/browser';
import type { QuickJSWASMModule } from 'quickjs-emscripten-core';
import { NODE_HELP, NODE_VERSION, parseNodeArgs } from '~/lib/browser/engine/offline/node/node-cli';
import { runNode, type NodeEntry } from '~/lib/browser/engine/offline/node/node-run';
import { resolvePosix } from '~/lib/posix-path';

/**
 * The shell's `node` command: QuickJS (sync single-file build, wasm embedded) loaded on first
 * use with a dynamic import, so the ~1.2 MB chunk is fetched only when a script runs.
 */

export interface NodeCommandLimits {
  timeLimitMs: number;
  memoryLimitBytes: number;
  /** Deadline of the bash call running now (epoch ms), if any. */
  outerDeadline?: number;
}

let quickjs: Promise<QuickJSWASMModule> | null = null;

export function loadQuickJS(): Promise<QuickJSWASMModule> {
  quickjs ??= (async () => {
    const [core, variant] = await Promise.all([import('quickjs-emscripten-core'), import('@jitl/quickjs-singlefile-browser-release-sync')]);
    return core.newQuickJSWASMModuleFromVariant(variant.default);
  })().catch((e: unknown) => {
    quickjs = null;
    throw e;
  });
  return quickjs;
}

const ok = (stdout: string) => ({ stdout, stderr: '', exitCode: 0 });
const err = (stderr: string, exitCode: number) => ({ stdout: '', stderr, exitCode });

function latin1Bytes(s: string): Uint8Array {
  const u = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i) & 255;
  return u;
}

export function createNodeCommand(limits: () => NodeCommandLimits): Command {
  return defineCommand('node', async (args, ctx) => {
    const inv = parseNodeArgs(args);
    switch (inv.kind) {
      case 'version':
        return ok(`${NODE_VERSION}\n`);
      case 'help':
        return ok(NODE_HELP);
      case 'usage-error':
        return err(`${inv.message}\n`, 9);
      default:
        break;
    }
    // stdin is a ByteString: at run time a latin1 string, one char per byte.
    const stdin = latin1Bytes(ctx.stdin as unknown as string);
    let entry: NodeEntry;
    if (inv.kind === 'file') {
      const path = resolvePosix(ctx.cwd, inv.file);
      const st = await ctx.fs.stat(path).catch(() => null);
      if (st === null || !st.isFile) {
        return err(`Error: Cannot find module '${path}'\n\nNode.js ${NODE_VERSION} (QuickJS, offline engine)\n`, 1);
      }
      if (inv.check) return checkSyntax(await loadQuickJS(), await ctx.fs.readFile(path), path);
      entry = { kind: 'file', path, args: inv.args, inputType: inv.inputType };
    } else if (inv.kind === 'eval') {
      entry = { kind: 'eval', code: inv.code, print: inv.print, filename: '[eval1]', args: inv.args, inputType: inv.inputType };
    } else {
      if (stdin.byteLength === 0) {
        return err('node: the offline engine has no interactive REPL: pass a script file, -e "code", or pipe a script in\n', 9);
      }
      entry = { kind: 'eval', code: new TextDecoder().decode(stdin), print: false, filename: '[stdin]', args: inv.args, inputType: inv.inputType };
    }

    const qjs = await loadQuickJS();
    const l = limits();
    const env = ctx.exportedEnv ?? Object.fromEntries(ctx.env);
    const result = await runNode(qjs, entry, {
      fs: ctx.fs,
      cwd: ctx.cwd,
      env,
      stdin: entry.kind === 'eval' && entry.filename === '[stdin]' ? new Uint8Array(0) : stdin,
      timeLimitMs: l.timeLimitMs,
      memoryLimitBytes: l.memoryLimitBytes,
      outerDeadline: l.outerDeadline,
      signal: ctx.signal,
      exec: async (command, o) => {
        if (!ctx.exec) return { stdout: '', stderr: 'child_process: no shell available\n', exitCode: 127 };
        const r = await ctx.exec(command, { cwd: o.cwd, env: o.env, replaceEnv: true, stdin: o.stdin, signal: ctx.signal });
        return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode };
      },
    });
    // A broken wasm instance must not run the next script: load a fresh one next time.
    if (result.poisoned) quickjs = null;
    return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode };
  });
}

/** `node --check file`: parse as a script (CommonJS) or, failing that, as a module. */
function checkSyntax(qjs: QuickJSWASMModule, source: string, path: string): { stdout: string; stderr: string; exitCode: number } {
  const ctx = qjs.newContext();
  try {
    const body = source.startsWith('#!') ? `//${source.slice(2)}` : source;
    const asScript = ctx.evalCode(`(function () {${body}\n})`, path, { compileOnly: true });
    if (!asScript.error) {
      asScript.value.dispose();
      return ok('');
    }
    const asModule = ctx.evalCode(body, path, { type: 'module', compileOnly: true });
    if (!asModule.error) {
      asScript.error.dispose();
      asModule.value.dispose();
      return ok('');
    }
    asModule.error.dispose();
    const d = ctx.dump(asScript.error) as { name?: string; message?: string; stack?: string };
    asScript.error.dispose();
    return err(`${path}\n${d.name ?? 'SyntaxError'}: ${d.message ?? ''}\n${d.stack ?? ''}\n`, 1);
  } finally {
    ctx.dispose();
  }
}
