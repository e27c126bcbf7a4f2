import Anthropic from '@anthropic-ai/sdk';
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
