import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSessionFor } from '~/server/agents/new-session';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

let dir: string;
const runtimes: Runtime[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-new-session-'));
});

afterEach(async () => {
  for (const rt of runtimes.splice(0)) {
    await rt.harness.close();
    await rt.store.close();
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

async function runtimeWith(env: Record<string, string>): Promise<Runtime> {
  const store = await openSqliteStore({ file: path.join(dir, `db-${runtimes.length}.sqlite`) });
  const rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env });
  runtimes.push(rt);
  await rt.agents.ensureDefaults();
  return rt;
}

describe('a new session in an environment with unrestricted networking', () => {
  it('is refused naming PADDOCK_ALLOW_UNRESTRICTED_NETWORK while the server does not allow it', async () => {
    const rt = await runtimeWith({});
    const env = await rt.agents.createEnvironment({ name: 'open', config: { type: 'cloud', networking: { type: 'unrestricted' } } });
    await expect(createSessionFor(rt, { agent: 'agent_default', environment_id: env.id })).rejects.toThrow(
      new RegExp(`environment_id: ${env.id} asks for unrestricted networking, which this server does not allow \\(PADDOCK_ALLOW_UNRESTRICTED_NETWORK is off\\)`),
    );
    expect((await rt.store.listSessions({ limit: 10, cursor: null })).data).toEqual([]);
  });

  it('is made when the server allows it', async () => {
    const rt = await runtimeWith({ PADDOCK_ALLOW_UNRESTRICTED_NETWORK: '1' });
    const env = await rt.agents.createEnvironment({ name: 'open', config: { type: 'cloud', networking: { type: 'unrestricted' } } });
    const { session } = await createSessionFor(rt, { agent: 'agent_default', environment_id: env.id });
    expect(session.environment_id).toBe(env.id);
  });
});
