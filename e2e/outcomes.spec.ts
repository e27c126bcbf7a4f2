import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { E2E_API_KEY, expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { shoot } from '~/e2e/shots';
import { APP_URL } from '~/e2e/ports';

/**
 * An outcome on the session page: defined through the official SDK, graded twice by the fake
 * model (needs revision, then satisfied); the page shows the outcome, each iteration's verdict
 * and the grader's explanation.
 */
const client = new Anthropic({ apiKey: E2E_API_KEY, baseURL: APP_URL, maxRetries: 0 });

test.describe.configure({ timeout: 120_000 });
test.beforeEach(resetFake);

const text = (t: string) => ({ kind: 'message' as const, steps: [{ kind: 'text' as const, text: t }] });

test('the session page shows an outcome, each verdict and its explanation', async ({ page }) => {
  const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', title: 'haiku outcome' });
  await enqueue(
    text('Tests run at dawn / the red bar glows on the screen / coffee, then green light'),
    text(JSON.stringify({ result: 'needs_revision', explanation: 'The second line has eight syllables: it must have seven.' })),
    text('Tests run at dawn / the red bar glows on screen / coffee, then green light'),
    text(JSON.stringify({ result: 'satisfied', explanation: 'Three lines of five, seven and five syllables, about tests.' })),
  );
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.define_outcome', description: 'Write a haiku about tests', rubric: { type: 'text', content: 'Three lines, 5-7-5 syllables, about tests.' } }] });
  for (let i = 0; i < 300; i++) {
    const got = await client.beta.sessions.retrieve(session.id);
    if (got.outcome_evaluations[0]?.result === 'satisfied' && got.status === 'idle') break;
    await new Promise((r) => setTimeout(r, 200));
  }

  await page.goto(`/s/${session.id}`);
  await expect(page.getByTestId('outcome-defined')).toContainText('Write a haiku about tests');
  const evaluations = page.getByTestId('outcome-evaluation');
  await expect(evaluations).toHaveCount(2);
  await expect(evaluations.nth(0)).toHaveAttribute('data-result', 'needs_revision');
  await expect(evaluations.nth(0)).toContainText('Iteration 1: needs revision');
  await expect(evaluations.nth(0)).toContainText('eight syllables');
  await expect(evaluations.nth(1)).toHaveAttribute('data-result', 'satisfied');
  await expect(evaluations.nth(1)).toContainText('Iteration 2: satisfied');
  await shoot(page, 'outcome');
});

test('the owner defines an outcome from the session page, at phone width, and sees it graded; renames the session there too', async ({ page }) => {
  const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', title: 'outcome from the page' });
  await enqueue(
    text('Green bars at noon / the build passes every test / ship it before lunch'),
    text(JSON.stringify({ result: 'needs_revision', explanation: 'It is about builds, not tests: make the tests the subject.' })),
    text('Each test holds its breath / assertions fall into place / all green, the tests pass'),
    text(JSON.stringify({ result: 'satisfied', explanation: 'A 5-7-5 haiku whose subject is the tests.' })),
  );
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/s/${session.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');

  await page.getByTestId('outcome-toggle').click();
  const panel = page.getByRole('dialog', { name: 'Define an outcome' });
  await panel.getByLabel('What should be done').fill('Write a haiku about tests');
  await panel.getByLabel('Rubric text').fill('Three lines, 5-7-5 syllables, about tests.');
  await expect(panel.getByLabel(/Iterations at most/)).toHaveValue('3');
  await panel.getByLabel(/Iterations at most/).fill('4');
  // The form fits the phone's width.
  const box = await panel.boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
  await shoot(page, 'outcome-form', [1440, 390]);
  await page.setViewportSize({ width: 390, height: 844 });
  await panel.getByRole('button', { name: 'Define outcome' }).click();
  await expect(panel).toHaveCount(0);

  // Work starts at once: the outcome, a verdict that sends it back, then the one that meets it.
  await expect(page.getByTestId('outcome-defined')).toContainText('Write a haiku about tests');
  await expect(page.getByTestId('outcome-defined')).toContainText('graded up to 4 times');
  const evaluations = page.getByTestId('outcome-evaluation');
  await expect(evaluations).toHaveCount(2, { timeout: 30_000 });
  await expect(evaluations.nth(0)).toHaveAttribute('data-result', 'needs_revision');
  await expect(evaluations.nth(0)).toContainText('make the tests the subject');
  await expect(evaluations.nth(1)).toHaveAttribute('data-result', 'satisfied', { timeout: 30_000 });
  await expect(page.getByTestId('status')).toHaveText('idle');
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  const got = await client.beta.sessions.retrieve(session.id);
  // One entry per outcome, where it stands: met on the second iteration, graded up to 4 times.
  expect(got.outcome_evaluations).toMatchObject([{ result: 'satisfied', iteration: 1 }]);
  const defined = (await client.beta.sessions.events.list(session.id, { types: ['user.define_outcome'] })).data;
  expect(defined).toMatchObject([{ description: 'Write a haiku about tests', max_iterations: 4 }]);

  await page.getByTestId('rename-toggle').click();
  await page.getByLabel('Title', { exact: true }).fill('Haiku about tests');
  await page.getByTestId('rename-save').click();
  await expect(page.getByTestId('session-title')).toHaveText('Haiku about tests');
  expect((await client.beta.sessions.retrieve(session.id)).title).toBe('Haiku about tests');
  await shoot(page, 'outcome-from-page', [1440, 390]);
});

test("an outcome's rubric can be a file's text, picked in the form", async ({ page }) => {
  const name = `rubric-${Date.now()}.md`;
  const file = await client.beta.files.upload({ file: await toFile(Buffer.from('The answer names two rivers.\n'), name, { type: 'text/markdown' }) });
  const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', title: 'rubric from a file' });
  await enqueue(text('The Rhine and the Danube.'), text(JSON.stringify({ result: 'satisfied', explanation: 'Two rivers named.' })));
  await page.goto(`/s/${session.id}`);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await page.getByTestId('outcome-toggle').click();
  const panel = page.getByRole('dialog', { name: 'Define an outcome' });
  await panel.getByLabel('What should be done').fill('Name two rivers of Europe');
  await panel.getByLabel('Rubric: how the grader judges it').selectOption({ label: `the text of ${name}` });
  // A file's text is the rubric: nothing to write.
  await expect(panel.getByLabel('Rubric text')).toHaveCount(0);
  await shoot(page, 'outcome-rubric-file', [1440, 390]);
  await panel.getByRole('button', { name: 'Define outcome' }).click();
  await expect(panel).toHaveCount(0);
  await expect(page.getByTestId('outcome-evaluation')).toHaveAttribute('data-result', 'satisfied', { timeout: 30_000 });
  const defined = (await client.beta.sessions.events.list(session.id, { types: ['user.define_outcome'] })).data;
  expect(defined).toMatchObject([{ description: 'Name two rivers of Europe', rubric: { type: 'text', content: 'The answer names two rivers.\n' }, rubric_file_id: file.id }]);
});
