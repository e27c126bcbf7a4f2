import { expect, test } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { send, startSession } from '~/e2e/session-page';
import { shoot } from '~/e2e/shots';

test.beforeEach(async () => {
  await resetFake();
});

test('a model that stays overloaded reads as a plain sentence with a Retry button, and Retry starts a turn that answers', async ({ page }) => {
  // 1 attempt + 4 retries (PADDOCK_MODEL_RETRIES), all overloaded: the session gives up.
  const overloaded = { kind: 'error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' } as const;
  await enqueue(overloaded, overloaded, overloaded, overloaded, overloaded);
  await page.goto('/');
  await startSession(page);
  await send(page, 'hello');

  const notice = page.getByTestId('session-error').last();
  await expect(notice).toContainText('The model is overloaded right now.', { timeout: 20_000 });
  await expect(notice).toContainText('press Retry');
  await expect(notice).not.toContainText('model_overloaded_error: Overloaded');
  await expect(page.getByTestId('status')).toHaveText('idle');
  await shoot(page, 'session-error');

  await enqueue({ kind: 'message', steps: [{ kind: 'text', text: 'Back again.' }] });
  await notice.getByTestId('retry').click();
  await expect(page.getByTestId('agent-message').last()).toHaveText('Back again.');
  // Retry is Paddock's action, not a message under "you": the person wrote only "hello".
  await expect(page.getByTestId('retry-notice')).toHaveCount(1);
  await expect(page.getByTestId('user-message')).toHaveCount(1);
  // Once the conversation moved on, the old notice offers no Retry.
  await expect(page.getByTestId('retry')).toHaveCount(0);
});
