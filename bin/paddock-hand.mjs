#!/usr/bin/env node
// Entry point for `npx paddock-hand`: runs the TypeScript CLI through tsx. The tsconfig is named
// explicitly so the `~/` path alias resolves whatever the current directory is. `paddock-hand
// worker …` (a self-hosted environment's worker) has its own entry, so the hand that sandboxes
// start (and its startup snapshot) never loads the API client the worker needs.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
if (process.argv[2] === 'worker') {
  if (!process.execArgv.includes('--conditions=react-server')) {
    process.stderr.write('paddock-hand worker: start it as bin/paddock-hand worker … (or node --conditions=react-server bin/paddock-hand.mjs worker …): its sandbox hands are made by the server\'s modules\n');
    process.exit(2);
  }
  const { workerMain } = await import(new URL('../server/hands/paddock-hand/worker-cli.ts', import.meta.url).href);
  try {
    await workerMain(process.argv.slice(3));
    process.exit(0);
  } catch (e) {
    process.stderr.write(`paddock-hand worker: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  }
} else {
  await import(new URL('../server/hands/paddock-hand/cli.ts', import.meta.url).href);
}
