#!/usr/bin/env node
// Entry point for `npx paddock-hand`: runs the TypeScript CLI through tsx. The tsconfig is named
// explicitly so the `~/` path alias resolves whatever the current directory is.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import(new URL('../server/hands/paddock-hand/cli.ts', import.meta.url).href);
