import type { Page } from '@playwright/test';
import { expect, test } from '~/e2e/auth';
import { send, startSession } from '~/e2e/session-page';
import { enqueue, recordedRequests, resetFake } from '~/e2e/fake';
import { shoot } from '~/e2e/shots';

test.beforeEach(async () => {
  await resetFake();
});

/** Creates an agent in the UI whose bash asks first; returns its name. */
async function createAskingAgent(page: Page, name: string): Promise<void> {
  await page.goto('/agents');
  await expect(page.getByTestId('agent-row').filter({ hasText: 'Default agent' })).toBeVisible();
  await page.getByTestId('new-agent').click();
  const form = page.getByTestId('agent-form');
  await form.getByTestId('agent-name').fill(name);
  await form.getByTestId('agent-model').fill('claude-e2e-model');
  await form.getByTestId('agent-system').fill('You run shell commands when asked.');
  await form.getByTestId('policy-bash').selectOption('always_ask');
  await form.getByTestId('save-agent').click();
  await expect(page.getByTestId('agent-form')).toHaveCount(0);
  const row = page.getByTestId('agent-row').filter({ hasText: name });
  await expect(row).toContainText('asks before bash');
  await expect(row.getByTestId('agent-version')).toHaveText('v1');
}

async function startSessionWith(page: Page, agentName: string): Promise<string> {
  await page.goto('/');
  const picker = page.getByTestId('new-session-agent');
  await expect(picker.locator('option', { hasText: agentName })).toHaveCount(1);
  await picker.selectOption({ label: `${agentName} (v1)` });
  await expect(page.getByTestId('new-session-environment')).toHaveValue('env_default');
  return startSession(page);
}

test('an agent whose bash asks first: the call waits for Allow, then runs and the answer appears', async ({ page }) => {
  await createAskingAgent(page, 'Careful shell');
  await shoot(page, 'agents');
  // The editor too, with the tools and their policies.
  await page.getByTestId('agent-row').filter({ hasText: 'Careful shell' }).getByTestId('edit-agent').click();
  await expect(page.getByTestId('policy-bash')).toHaveValue('always_ask');
  await shoot(page, 'agent-form');
  await page.getByRole('button', { name: 'Cancel' }).click();

  await enqueue(
    { kind: 'message', steps: [{ kind: 'text', text: 'Running it.' }, { kind: 'tool_use', name: 'bash', input: { command: 'echo approved-$((40+2))' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'The command printed approved-42.' }] },
  );
  await startSessionWith(page, 'Careful shell');
  await send(page, 'run the echo');

  // The line gains the session's token use once the first model request ends: only its start is fixed.
  await expect(page.getByTestId('session-agent')).toHaveText(/^agent: Careful shell v1 · model: claude-e2e-model · environment: env_default/);
  const call = page.getByTestId('tool-call');
  await expect(call.getByTestId('tool-confirm')).toBeVisible();
  await expect(call).toContainText('waiting for your approval');
  await expect(page.getByTestId('approval-banner')).toHaveText('A tool call waits for your approval ↓');
  await expect(page.getByTestId('status')).toHaveText('needs approval');
  // Nothing ran: the model was asked once and no result exists yet.
  expect((await recordedRequests()).filter((r) => r.path === '/v1/messages')).toHaveLength(1);
  await expect(call.getByTestId('tool-result')).toHaveCount(0);
  await shoot(page, 'prompt');

  await call.getByTestId('tool-allow').click();
  await expect(call.getByTestId('tool-verdict')).toHaveText('You allowed this call.');
  await expect(page.getByTestId('approval-banner')).toHaveCount(0);
  await expect(call.getByTestId('tool-result')).toContainText('approved-42');
  await expect(page.getByTestId('agent-message').last()).toHaveText('The command printed approved-42.');
  await expect(page.getByTestId('status')).toHaveText('idle');
  await expect(page.locator('[data-type="user.tool_confirmation"]')).toContainText('allowed');

  // The session ran the agent's own model and system prompt.
  const first = (await recordedRequests()).find((r) => r.path === '/v1/messages')!.body as { model?: string; system?: unknown } | null;
  expect(first?.model).toBe('claude-e2e-model');
  expect(JSON.stringify(first?.system)).toContain('You run shell commands when asked.');
});

test('a denied call never runs: the model gets the owner\'s message', async ({ page }) => {
  await createAskingAgent(page, 'Denied shell');
  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'touch should-not-exist' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Understood, I will not.' }] },
  );
  await startSessionWith(page, 'Denied shell');
  await send(page, 'make a file');
  const call = page.getByTestId('tool-call');
  await call.getByTestId('tool-deny').click();
  await call.getByTestId('deny-message').fill('not in this repo');
  await call.getByTestId('deny-message').press('Enter');
  await expect(call.getByTestId('tool-verdict')).toHaveText('You denied this call: not in this repo');
  await expect(page.getByTestId('agent-message').last()).toHaveText('Understood, I will not.');
  // Denied, not failed; the reason shown once, in the verdict (the model got it as the call's result).
  await expect(call.getByTestId('tool-state')).toHaveText('denied');
  await expect(call.getByText('not in this repo')).toHaveCount(1);
  const second = (await recordedRequests()).filter((r) => r.path === '/v1/messages')[1]!.body;
  expect(JSON.stringify(second?.messages)).toContain('not in this repo');
});

test('creates and edits an environment; the default one cannot be deleted', async ({ page }) => {
  await page.goto('/environments');
  const defaultRow = page.getByTestId('environment-row').filter({ hasText: 'Default environment' });
  await expect(defaultRow).toBeVisible();
  await expect(defaultRow.getByTestId('delete-environment')).toHaveCount(0);

  await page.getByTestId('new-environment').click();
  const form = page.getByTestId('environment-form');
  await form.getByTestId('environment-name').fill('Web tools');
  await form.getByTestId('network-limited').check();
  await form.getByTestId('allowed-hosts').fill('api.github.com\n*.npmjs.org');
  await form.getByTestId('allow-package-managers').check();
  await form.getByTestId('packages-npm').fill('left-pad typescript');
  await form.getByTestId('packages-pip').fill('requests');
  await shoot(page, 'environment-form');
  await form.getByTestId('save-environment').click();
  const row = page.getByTestId('environment-row').filter({ hasText: 'Web tools' });
  await expect(row).toContainText('network: api.github.com, *.npmjs.org + package managers');
  await expect(row).toContainText('npm: left-pad typescript');
  await expect(row).toContainText('pip: requests');
  await shoot(page, 'environments');

  // A bad host is refused, naming what is wrong; nothing changes.
  await row.getByTestId('edit-environment').click();
  await page.getByTestId('allowed-hosts').fill('https://example.com/path');
  await page.getByTestId('save-environment').click();
  await expect(page.getByTestId('environment-form-error')).toContainText('must be a host name');
  await page.getByTestId('network-unrestricted').check();
  await page.getByTestId('save-environment').click();
  await expect(row).toContainText('network: unrestricted');

  // A limited environment without packages (what sandboxed hands can honour) is offered for new
  // sessions, and a session made with it says so.
  await page.getByTestId('new-environment').click();
  await page.getByTestId('environment-name').fill('Docs only');
  await page.getByTestId('allowed-hosts').fill('docs.python.org');
  await page.getByTestId('save-environment').click();
  await expect(page.getByTestId('environment-row').filter({ hasText: 'Docs only' })).toContainText('network: docs.python.org');
  await page.goto('/');
  await page.getByTestId('new-session-environment').selectOption({ label: 'Docs only' });
  await shoot(page, 'home');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('session-agent')).toContainText(/environment: env_\w+/);
  await expect(page.getByTestId('session-agent')).not.toContainText('env_default');

  await page.goto('/environments');
  page.once('dialog', (d) => void d.accept());
  await page.getByTestId('environment-row').filter({ hasText: 'Web tools' }).getByTestId('delete-environment').click();
  await expect(page.getByTestId('environment-row').filter({ hasText: 'Web tools' })).toHaveCount(0);
});

test('a custom tool made in the editor: its call waits for the client\'s result', async ({ page }) => {
  await page.goto('/agents');
  await page.getByTestId('new-agent').click();
  const form = page.getByTestId('agent-form');
  await form.getByTestId('agent-name').fill('With lookup');
  // The default model fills in once the agents list has loaded; saving before would be blocked by
  // the browser (a required field), not by the form, and show no error of ours.
  await expect(form.getByLabel('Model id')).not.toHaveValue('');
  await form.getByTestId('add-custom-tool').click();
  const tool = form.getByTestId('custom-tool');
  await tool.getByLabel('Name').fill('lookup');
  await tool.getByLabel('Description').fill('Looks a word up in the client\'s dictionary.');
  // A schema that is not JSON is named, and nothing is saved.
  await tool.getByLabel('Input schema (JSON)').fill('{ "type": "object", ');
  await form.getByTestId('save-agent').click();
  await expect(page.getByTestId('agent-form-error')).toHaveText('custom tool lookup: the input schema is not valid JSON');
  await tool.getByLabel('Input schema (JSON)').fill('{ "type": "object", "properties": { "word": { "type": "string" } }, "required": ["word"] }');
  await form.getByTestId('save-agent').click();
  const row = page.getByTestId('agent-row').filter({ hasText: 'With lookup' });
  await expect(row).toContainText('custom: lookup');
  // An edit is a new version; the custom tool is kept as it was.
  await row.getByTestId('edit-agent').click();
  await expect(page.getByTestId('custom-tool').getByLabel('Name')).toHaveValue('lookup');
  await page.getByTestId('agent-form').getByLabel('Description').first().fill('answers words');
  await page.getByTestId('save-agent').click();
  await expect(row.getByTestId('agent-version')).toHaveText('v2');
  await expect(row).toContainText('answers words');
  await expect(row).toContainText('custom: lookup');

  await enqueue({ kind: 'message', steps: [{ kind: 'tool_use', name: 'lookup', input: { word: 'paddock' } }] });
  await page.goto('/');
  await page.getByTestId('new-session-agent').selectOption({ label: 'With lookup (v2)' });
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/sesn_/);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await send(page, 'what is a paddock?');
  const call = page.getByTestId('custom-tool-call');
  await expect(call).toContainText("waiting for the client's result");
  await expect(call).toContainText('"word": "paddock"');
  await expect(page.getByTestId('status')).toHaveText('idle');
  // The model saw the tool as the agent defines it.
  const first = (await recordedRequests()).find((r) => r.path === '/v1/messages')!.body as { tools?: { name: string; input_schema?: unknown }[] } | null;
  expect(first?.tools?.find((t) => t.name === 'lookup')?.input_schema).toEqual({ type: 'object', properties: { word: { type: 'string' } }, required: ['word'] });
});

test('an agent with a context window: set in the editor, listed, and its sessions get the session_events tool', async ({ page }) => {
  const name = `Windowed ${Date.now().toString(36)}`;
  await page.goto('/agents');
  await page.getByTestId('new-agent').click();
  const form = page.getByTestId('agent-form');
  await form.getByTestId('agent-name').fill(name);
  await form.getByTestId('agent-model').fill('claude-e2e-model');
  await form.getByTestId('context-policy-type').selectOption('window');
  await form.getByTestId('context-window-tokens').fill('40000');
  await form.getByTestId('context-policy').scrollIntoViewIfNeeded();
  await shoot(page, 'agent-context-policy');
  await form.getByTestId('save-agent').click();
  await expect(page.getByTestId('agent-form')).toHaveCount(0);
  await expect(page.getByTestId('agent-row').filter({ hasText: name })).toContainText('context: window of 40k tokens');

  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Windowed hello.' }] });
  await startSessionWith(page, name);
  await send(page, 'hello');
  await expect(page.getByTestId('agent-message').last()).toHaveText('Windowed hello.');
  const [request] = await recordedRequests();
  expect(((request!.body as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name)).toContain('session_events');
});
