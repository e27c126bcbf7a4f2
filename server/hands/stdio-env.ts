import 'server-only';
import type { Stream } from 'node:stream';

const STDERR_KEEP_BYTES = 4096;
const STDERR_TAIL_LINES = 5;

/**
 * A stdio hand gets a minimal environment: the server's own (API keys, vault secrets) must never
 * reach a hand. (The SDK adds its short "safe" list — HOME, LOGNAME, PATH, SHELL, TERM, USER.)
 */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'LANG'] as const) {
    const v = process.env[key];
    if (v !== undefined) env[key] = v;
  }
  return env;
}

/** Keeps the last few KB of a child's stderr for error messages. */
export function stderrTail(transport: { readonly stderr: Stream | null }): () => string {
  let buf = '';
  transport.stderr?.on('data', (chunk: Buffer | string) => {
    buf = (buf + chunk.toString()).slice(-STDERR_KEEP_BYTES);
  });
  return () =>
    buf
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l.length > 0)
      .slice(-STDERR_TAIL_LINES)
      .join('\n');
}
