import type { ScriptedResponse } from '~/server/harness/testing/fake-messages-api';
import { FAKE_URL } from '~/e2e/ports';

const FAKE = FAKE_URL;

/** Scripts the next answers of the fake Messages API the app under test talks to. */
export async function enqueue(...responses: ScriptedResponse[]): Promise<void> {
  const res = await fetch(`${FAKE}/_control/enqueue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(responses) });
  if (!res.ok) throw new Error(`enqueue failed: ${res.status} ${await res.text()}`);
}

export async function resetFake(): Promise<void> {
  await fetch(`${FAKE}/_control/reset`, { method: 'POST' });
}

export async function recordedRequests(): Promise<Array<{ path: string; auth: string | null; body: { messages?: unknown[] } | null }>> {
  const res = await fetch(`${FAKE}/_control/requests`);
  return (await res.json()) as Array<{ path: string; auth: string | null; body: { messages?: unknown[] } | null }>;
}
