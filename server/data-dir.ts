import 'server-only';
import fs from 'node:fs';

/**
 * The data directory holds the database and (later) key files: the server's user only. Created
 * 0700, and narrowed to 0700 if an older version left it wider.
 */
export function prepareDataDir(dir: string): void {
  // turbopackIgnore: a runtime path, not a file to bundle.
  fs.mkdirSync(/*turbopackIgnore: true*/ dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(/*turbopackIgnore: true*/ dir, 0o700);
}
