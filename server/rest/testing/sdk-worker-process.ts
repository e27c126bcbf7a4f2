/**
 * The official SDK's self-hosted worker (`client.beta.environments.work.worker()`) in a process of
 * its own, as a user runs it on their machine, for tests that SIGKILL it mid-call:
 *
 *   node --import tsx server/rest/testing/sdk-worker-process.ts <baseURL> <environment id> <worker id> <workdir>
 *
 * The environment key comes in PADDOCK_ENVIRONMENT_KEY. Nothing of Paddock is imported: it speaks
 * /v1 only. Exits when its parent is gone, so no orphan polls on.
 */
import Anthropic from '@anthropic-ai/sdk';

const [baseURL, environmentId, workerId, workdir] = process.argv.slice(2);
const environmentKey = process.env.PADDOCK_ENVIRONMENT_KEY;
if (!baseURL || !environmentId || !workerId || !workdir || !environmentKey) throw new Error('usage: sdk-worker-process.ts <baseURL> <environment id> <worker id> <workdir> (PADDOCK_ENVIRONMENT_KEY set)');

const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 500);

const client = new Anthropic({ apiKey: null, authToken: environmentKey, baseURL, maxRetries: 2 });
process.stdout.write(`sdk-worker ready ${process.pid}\n`);
await client.beta.environments.work.worker({ environmentId, environmentKey, workerId, workdir }).run();
