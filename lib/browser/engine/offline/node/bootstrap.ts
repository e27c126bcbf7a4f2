import 'client-only';
import { BOOTSTRAP_CORE } from '~/lib/browser/engine/offline/node/bootstrap-core';
import { BOOTSTRAP_FS } from '~/lib/browser/engine/offline/node/bootstrap-fs';
import { BOOTSTRAP_MODULES } from '~/lib/browser/engine/offline/node/bootstrap-modules';
import { BOOTSTRAP_PROCESS } from '~/lib/browser/engine/offline/node/bootstrap-process';

/** The built-in modules the offline `node` provides (names without `node:`). */
export const NODE_BUILTINS = [
  'fs', 'fs/promises', 'path', 'path/posix', 'os', 'util', 'util/types', 'events', 'child_process',
  'assert', 'assert/strict', 'buffer', 'timers', 'timers/promises', 'url', 'module', 'process',
  'readline', 'readline/promises', 'string_decoder', 'crypto', 'tty', 'perf_hooks', 'console',
] as const;

/** Node built-ins the offline engine cannot provide: a clear error instead of "not found". */
export const UNSUPPORTED_BUILTINS = [
  'http', 'https', 'http2', 'net', 'tls', 'dgram', 'dns', 'zlib', 'stream', 'stream/promises', 'vm', 'worker_threads',
  'cluster', 'inspector', 'v8', 'async_hooks', 'diagnostics_channel', 'repl', 'querystring', 'punycode', 'sqlite', 'test',
] as const;

export interface BootstrapConfig {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  builtins: readonly string[];
}

/** Source of a function `(host, config) => void` that sets up Node's globals and `require`. */
export const BOOTSTRAP_SOURCE = `(function (host, config) {\n'use strict';\n${BOOTSTRAP_CORE}\n${BOOTSTRAP_PROCESS}\n${BOOTSTRAP_FS}\n${BOOTSTRAP_MODULES}\n})`;
