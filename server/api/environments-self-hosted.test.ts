import { describe, expect, it } from 'vitest';
import { createCaller } from '~/server/api/root';
import { OWNER } from '~/server/access/testing/callers';
import { demoRuntimePerTest, rejection } from '~/server/api/testing/demo-runtime';

const runtime = demoRuntimePerTest('paddock-self-hosted-api-');
const api = () => createCaller({ runtime: runtime(), caller: OWNER });

describe("a self-hosted environment's page over tRPC", () => {
  it('makes a key shown once, lists it by prefix, shows the queue and its items, and revokes the key', async () => {
    const env = await api().environments.create({ name: 'laptops', config: { type: 'self_hosted' } });
    expect(await api().environments.selfHosted({ id: env.id })).toMatchObject({ keys: [], stats: { depth: 0, pending: 0, workers_polling: 0 }, items: [] });
    const made = await api().environments.createKey({ id: env.id, name: 'my laptop' });
    expect(made.key).toMatch(/^pdek_/);
    const session = await runtime().store.createSession({ title: 'x', environment_id: env.id });
    await runtime().work.needWorker(session.id, env.id);
    const page = await api().environments.selfHosted({ id: env.id });
    expect(page?.keys).toEqual([expect.objectContaining({ id: made.id, name: 'my laptop', prefix: made.prefix })]);
    expect(JSON.stringify(page)).not.toContain(made.key);
    expect(page?.stats).toMatchObject({ depth: 1 });
    expect(page?.items).toEqual([expect.objectContaining({ data: { type: 'session', id: session.id }, state: 'queued', secret: null })]);
    await api().environments.revokeKey({ id: env.id, keyId: made.id });
    expect((await api().environments.selfHosted({ id: env.id }))?.keys).toEqual([]);
    expect((await rejection(api().environments.revokeKey({ id: env.id, keyId: made.id }))).code).toBe('NOT_FOUND');
  });

  it('has no work queue for a cloud environment and makes it no keys or healthchecks', async () => {
    expect(await api().environments.selfHosted({ id: 'env_default' })).toBeNull();
    expect((await rejection(api().environments.createKey({ id: 'env_default', name: 'k' }))).code).toBe('BAD_REQUEST');
    expect((await rejection(api().environments.checkWorkers({ id: 'env_default' }))).code).toBe('BAD_REQUEST');
  });

  it('queues a healthcheck item the page lists', async () => {
    const env = await api().environments.create({ name: 'laptops', config: { type: 'self_hosted' } });
    const item = await api().environments.checkWorkers({ id: env.id });
    expect(item).toMatchObject({ type: 'work', environment_id: env.id, data: { type: 'healthcheck', id: item.id }, state: 'queued', secret: null });
    expect((await api().environments.selfHosted({ id: env.id }))?.items).toEqual([expect.objectContaining({ id: item.id, data: { type: 'healthcheck', id: item.id } })]);
  });
});
