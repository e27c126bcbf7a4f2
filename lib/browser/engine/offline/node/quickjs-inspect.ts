import 'client-only';
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';
import { looksLikeEsm } from '~/lib/browser/engine/offline/node/resolve';

/**
 * What a run asks of its QuickJS context about a script or an escaped exception: each call
 * disposes what it creates (a leaked handle keeps the runtime from being freed) and none throws.
 * `internal` is the bootstrap's own object of helpers, null before the bootstrap ran.
 */

export interface DumpedError {
  name: string;
  message: string;
  stack: string;
}

/** Whether source that is not plainly ESM still only parses as a module (Node 22's detection for an ambiguous .js). */
export function isModuleSource(ctx: QuickJSContext, code: string, filename: string): boolean {
  if (looksLikeEsm(code)) return true;
  const asScript = ctx.evalCode(`(function () {${code}\n})`, filename, { compileOnly: true });
  if (!asScript.error) {
    asScript.value.dispose();
    return false;
  }
  asScript.error.dispose();
  const asModule = ctx.evalCode(code, filename, { type: 'module', compileOnly: true });
  if (asModule.error) {
    asModule.error.dispose();
    return false;
  }
  asModule.value.dispose();
  return true;
}

/** The bootstrap's `process.exit` unwinds with its own marker, which is an exit, not a failure. */
export function isProcessExit(ctx: QuickJSContext, internal: QuickJSHandle | null, err: QuickJSHandle): boolean {
  if (!internal) return false;
  const fn = ctx.getProp(internal, 'isProcessExit');
  const r = ctx.callFunction(fn, ctx.undefined, err);
  fn.dispose();
  if (r.error) {
    r.error.dispose();
    return false;
  }
  const yes = ctx.dump(r.value) === true;
  r.value.dispose();
  return yes;
}

/** Name, message and stack of whatever was thrown (a script may throw a string or a bare object). */
export function dumpError(ctx: QuickJSContext, err: QuickJSHandle): DumpedError {
  try {
    const d: unknown = ctx.dump(err);
    if (typeof d === 'object' && d !== null) {
      const o = d as Record<string, unknown>;
      const text = (v: unknown, d: string) => (typeof v === 'string' ? v : v === undefined || v === null ? d : JSON.stringify(v));
      return { name: text(o.name, 'Error'), message: text(o.message, ''), stack: text(o.stack, '') };
    }
    return { name: '', message: String(d), stack: '' };
  } catch {
    return { name: 'Error', message: 'unknown error', stack: '' };
  }
}

/** The error as Node prints an uncaught one (the bootstrap's formatter), else name, message and stack. */
export function formatScriptError(ctx: QuickJSContext, internal: QuickJSHandle | null, err: QuickJSHandle, dumped: DumpedError): string {
  if (internal) {
    const fn = ctx.getProp(internal, 'formatError');
    const r = ctx.callFunction(fn, ctx.undefined, err);
    fn.dispose();
    if (!r.error) {
      const text = ctx.getString(r.value);
      r.value.dispose();
      return text;
    }
    r.error.dispose();
  }
  return `${dumped.name}: ${dumped.message}\n${dumped.stack}`.trimEnd();
}

/** A built-in module's export names, so `import { x } from 'node:fs'` links against the CommonJS object. */
export function builtinExportNames(ctx: QuickJSContext, internal: QuickJSHandle | null, id: string): string[] {
  if (!internal) return [];
  const fn = ctx.getProp(internal, 'exportNames');
  const arg = ctx.newString(id);
  const r = ctx.callFunction(fn, ctx.undefined, arg);
  arg.dispose();
  fn.dispose();
  if (r.error) {
    r.error.dispose();
    return [];
  }
  const s = ctx.getString(r.value);
  r.value.dispose();
  return s === '' ? [] : s.split(',');
}
