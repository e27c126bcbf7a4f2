import 'client-only';
/** The `node` command line the offline engine understands (a subset of Node's). */

export type NodeInvocation =
  | { kind: 'version' }
  | { kind: 'help' }
  | { kind: 'usage-error'; message: string }
  | { kind: 'file'; file: string; args: string[]; check: boolean; inputType?: 'module' | 'commonjs' }
  | { kind: 'eval'; code: string; print: boolean; args: string[]; inputType?: 'module' | 'commonjs' }
  /** The script comes from stdin (`node -` or `node` with piped input). */
  | { kind: 'stdin'; args: string[]; inputType?: 'module' | 'commonjs' };

export const NODE_VERSION = 'v22.12.0';

export const NODE_HELP = `Usage: node [options] [ script.js | -e "script" | - ] [arguments]

The offline engine's node: QuickJS in a Web Worker, with Node's require/import, fs (the
workspace), path, os, util, events, child_process (async, runs in this shell), timers and more.
Not available: network modules (http, net…), zlib, vm, worker_threads, native addons, the REPL.

Options:
  -e, --eval script       evaluate script
  -p, --print script      evaluate script and print the result
  -c, --check             syntax-check a script without running it
  --input-type=module     treat -e/-p/stdin input as an ES module
  -v, --version           print the version
  -h, --help              this help
Limits: each run is stopped after its time limit (default 5 s) or memory limit (default 64 MiB).
`;

/** Options that take a value and are otherwise ignored (they mean nothing here). */
const IGNORED_WITH_VALUE = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '--conditions', '-C', '--title']);

export function parseNodeArgs(argv: string[]): NodeInvocation {
  let inputType: 'module' | 'commonjs' | undefined;
  let check = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-v' || a === '--version') return { kind: 'version' };
    if (a === '-h' || a === '--help') return { kind: 'help' };
    if (a === '-e' || a === '--eval' || a === '-p' || a === '--print') {
      const code = argv[i + 1];
      if (code === undefined) return { kind: 'usage-error', message: `node: ${a} requires an argument` };
      return { kind: 'eval', code, print: a === '-p' || a === '--print', args: argv.slice(i + 2), inputType };
    }
    if (a.startsWith('--eval=') || a.startsWith('--print=')) {
      const print = a.startsWith('--print=');
      return { kind: 'eval', code: a.slice(a.indexOf('=') + 1), print, args: argv.slice(i + 1), inputType };
    }
    if (a === '-c' || a === '--check') {
      check = true;
      continue;
    }
    if (a.startsWith('--input-type=')) {
      const t = a.slice('--input-type='.length);
      if (t !== 'module' && t !== 'commonjs') return { kind: 'usage-error', message: `node: --input-type must be "module" or "commonjs"` };
      inputType = t;
      continue;
    }
    if (a === '-') return { kind: 'stdin', args: argv.slice(i + 1), inputType };
    if (a === '--') {
      const file = argv[i + 1];
      return file === undefined ? { kind: 'stdin', args: [], inputType } : { kind: 'file', file, args: argv.slice(i + 2), check, inputType };
    }
    if (IGNORED_WITH_VALUE.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue; // --no-warnings, --experimental-*, --enable-source-maps…: no meaning here
    return { kind: 'file', file: a, args: argv.slice(i + 1), check, inputType };
  }
  return { kind: 'stdin', args: [], inputType };
}
