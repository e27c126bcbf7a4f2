#!/usr/bin/env node
// Entry point of the sandbox launcher (server/hands/sandbox/launcher.ts): registers tsx with the
// repo's tsconfig so the TypeScript source and its `~/` imports load without a build step.
import { fileURLToPath } from 'node:url';

// Plain-JS dependencies load before tsx hooks in: Node's own loader takes ~200 ms less for them,
// and this start-up is on the path of every hand being provisioned. launcher.ts gets the same
// module instances from the cache.
await import('@anthropic-ai/sandbox-runtime');
await import('zod');

const { register } = await import('tsx/esm/api');
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('../server/hands/sandbox/launcher.ts');
