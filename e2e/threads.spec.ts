import Anthropic from '@anthropic-ai/sdk';
import { E2E_API_KEY, expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { shoot } from '~/e2e/shots';
import { APP_URL } from '~/e2e/ports';

/**
 * A multiagent session on its page: a coordinator made through the official SDK delegates to a
 * rostered agent; the page lists the threads, shows the delegation and the report inline, and a
 * click on the child shows its own conversation. The child and the coordinator ask the fake model
 * at the same moment, so the two answers after the delegation are the same text (either may take
 * either one).
 */
const client = new Anthropic({ apiKey: E2E_API_KEY, baseURL: APP_URL, maxRetries: 0 });

test.describe.configure({ timeout: 120_000 });
test.beforeEach(resetFake);

const text = (t: string) => ({ kind: 'message' as const, steps: [{ kind: 'text' as const, text: t }] });

test('the session page lists its threads, shows a delegation and its report inline, and a thread’s own conversation', async ({ page }) => {
  const writer = await client.beta.agents.create({ name: 'writer', model: 'claude-fake', system: 'You write release notes.', tools: [{ type: 'agent_toolset_20260401' }] });
  const lead = await client.beta.agents.create({ name: 'lead', model: 'claude-fake', system: 'You lead.', tools: [{ type: 'agent_toolset_20260401' }], multiagent: { type: 'coordinator', agents: [writer.id] } });
  const session = await client.beta.sessions.create({ agent: lead.id, environment_id: 'env_default', title: 'release notes team' });
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'send_to_agent', input: { agent: 'writer', message: 'Draft the release notes for 1.2.' } }] },
    text('Release notes drafted: three fixes, one feature.'),
    text('Release notes drafted: three fixes, one feature.'),
    text('The writer reported back; the notes are ready.'),
  );
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Get the release notes written.' }] }] });
  let threads: Awaited<ReturnType<typeof client.beta.sessions.threads.retrieve>>[] = [];
  for (let i = 0; i < 300; i++) {
    threads = (await client.beta.sessions.threads.list(session.id)).data;
    const got = await client.beta.sessions.retrieve(session.id);
    if (got.status === 'idle' && threads.length === 2 && threads.every((t) => t.status === 'idle')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const child = threads.find((t) => t.parent_thread_id !== null);
  expect(child).toMatchObject({ status: 'idle', agent: { name: 'writer' } });

  await page.goto(`/s/${session.id}`);
  const row = page.getByTestId('thread-row');
  await expect(row).toHaveCount(1);
  await expect(row).toContainText('writer');
  await expect(row).toHaveAttribute('data-status', 'idle');
  // The coordinator's conversation: the delegation out and the report in.
  await expect(page.getByTestId('thread-sent')).toContainText('→ writer');
  await expect(page.getByTestId('thread-sent')).toContainText('Draft the release notes for 1.2.');
  await expect(page.getByTestId('thread-received')).toContainText('← writer');
  await expect(page.getByTestId('thread-received')).toContainText('Release notes drafted');
  await shoot(page, 'threads-coordinator', [1440, 390]);

  // The child's own conversation: the message it was sent and its answer.
  await row.click();
  await expect(row).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByText('Draft the release notes for 1.2.').first()).toBeVisible();
  await expect(page.getByText('Release notes drafted: three fixes, one feature.').first()).toBeVisible();
  await expect(page.getByTestId('thread-received')).toContainText('← lead');
  await expect(page.getByTestId('thread-sent')).toContainText('→ coordinator');
  await shoot(page, 'threads-child', [1440, 390]);
  // At phone width nothing of the thread view is wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.getByTestId('thread-primary').click();
  await expect(page.getByTestId('thread-primary')).toHaveAttribute('aria-pressed', 'true');
});

test('a child thread’s call that asks first is allowed from the coordinator’s conversation; the child runs it and reports back', async ({ page }) => {
  const checker = await client.beta.agents.create({
    name: 'checker',
    model: 'claude-fake',
    system: 'You are the checker.',
    tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }],
  });
  const lead = await client.beta.agents.create({ name: 'lead', model: 'claude-fake', system: 'You lead the checks.', tools: [{ type: 'agent_toolset_20260401' }], multiagent: { type: 'coordinator', agents: [checker.id] } });
  const session = await client.beta.sessions.create({ agent: lead.id, environment_id: 'env_default', title: 'a child asks first' });
  // Each answer is kept for its own agent: the coordinator and the child ask the model at once.
  const lead_ = 'You lead the checks.';
  const child = 'You are the checker.';
  await enqueue(
    { forSystem: lead_, kind: 'message', steps: [{ kind: 'tool_use', name: 'send_to_agent', input: { agent: 'checker', message: 'Run the release check.' } }] },
    { forSystem: lead_, ...text('The checker is on it.') },
    { forSystem: child, kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo release-check-passed' } }] },
    { forSystem: child, ...text('The release check passed.') },
    { forSystem: lead_, ...text('The checker reports the release check passed.') },
  );
  await page.goto(`/s/${session.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Check the release.' }] }] });

  // The child's call waits in the coordinator's conversation, where the owner is looking.
  const ask = page.getByTestId('tool-confirm');
  await expect(ask).toBeVisible({ timeout: 20_000 });
  await expect(ask).toContainText('bash');
  await expect(page.getByTestId('approval-banner')).toBeVisible();
  await expect(page.getByTestId('thread-row')).toHaveAttribute('data-status', 'needs_approval');
  // Labelled with the child that asks: the coordinator's conversation is not the child's.
  await expect(page.getByTestId('tool-asker')).toHaveText('checker asks:');
  await shoot(page, 'threads-child-asks', [1440, 390]);
  await ask.getByRole('button', { name: 'Allow' }).click();

  await expect(page.getByTestId('tool-verdict').first()).toContainText('allowed');
  await expect(page.getByTestId('thread-received').last()).toContainText('The release check passed.', { timeout: 20_000 });
  await expect(page.getByTestId('agent-message').last()).toContainText('The checker reports the release check passed.', { timeout: 20_000 });
  await expect(page.getByTestId('approval-banner')).toHaveCount(0);
  // Read again from the log, the answered call asks nothing more.
  await page.reload();
  await expect(page.getByTestId('agent-message').last()).toContainText('The checker reports the release check passed.');
  await expect(page.getByTestId('tool-verdict').first()).toContainText('You allowed this call.');
  await expect(page.getByTestId('tool-confirm')).toHaveCount(0);
  // The child ran the call itself, on the session's hand: the result is on its own thread.
  const thread = (await client.beta.sessions.threads.list(session.id)).data.find((t) => t.parent_thread_id !== null);
  const events = [];
  for await (const e of client.beta.sessions.threads.events.list(thread!.id, { session_id: session.id })) events.push(e);
  const result = events.find((e) => e.type === 'agent.tool_result');
  expect(JSON.stringify(result)).toContain('release-check-passed');
});
