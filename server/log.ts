/**
 * A scoped, levelled logger writing one JSON line per entry to stderr. Never log secrets:
 * callers pass ids and counts, not request bodies or headers.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

function threshold(): number {
  const lvl = process.env.PADDOCK_LOG_LEVEL as Level | 'silent' | undefined;
  return ORDER[lvl ?? (process.env.VITEST ? 'error' : 'info')] ?? ORDER.info;
}

export function logger(scope: string): Logger {
  const write = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < threshold()) return;
    const line = JSON.stringify({ t: new Date().toISOString(), level, scope, msg, ...fields });
    process.stderr.write(`${line}\n`);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (s) => logger(`${scope}.${s}`),
  };
}

export function errorFields(e: unknown): Record<string, unknown> {
  return e instanceof Error ? { error: e.message, name: e.name } : { error: String(e) };
}
