'use client';
import { useMutation } from '@tanstack/react-query';
import { useRef } from 'react';
import { useTRPC } from '~/lib/browser/trpc';
import { RETRY_MESSAGE } from '~/app/_components/session-view/error-text';

/** Starts a new turn after the retries ran out: a message asking the agent to go on, sent once per click. */
export function RetryButton({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  // One key per press: a resend after a lost answer stores the message once.
  const key = useRef(crypto.randomUUID());
  const send = useMutation(trpc.events.send.mutationOptions());
  return (
    <span className="retry">
      <button
        type="button"
        data-testid="retry"
        disabled={send.isPending || send.isSuccess}
        onClick={() => send.mutate({ sessionId, event: { type: 'user.message', content: [{ type: 'text', text: RETRY_MESSAGE }] }, idempotencyKey: key.current })}
      >
        {send.isSuccess ? 'Retrying…' : 'Retry'}
      </button>
      {send.error && <span className="small error"> {send.error.message}</span>}
    </span>
  );
}
