'use client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useRef, useState } from 'react';
import { storeUnavailable, useTRPC } from '~/lib/browser/trpc';

/** `ended`: the session is terminated (final): nothing can be sent to it, and the box says so. */
export function Composer({ sessionId, busy, disabled, ended = false, onSend }: { sessionId: string; busy: boolean; disabled: boolean; ended?: boolean; onSend?: () => void }) {
  const trpc = useTRPC();
  const [text, setText] = useState('');
  // One key per message: sending the same text again after a failure (whose answer may have been
  // lost after the message was stored) stores it once.
  const pending = useRef<{ text: string; key: string } | null>(null);
  const queryClient = useQueryClient();
  const send = useMutation(
    trpc.events.send.mutationOptions({
      onSuccess: () => {
        pending.current = null;
        setText('');
        // The first message names an untitled session.
        void queryClient.invalidateQueries(trpc.sessions.get.queryFilter({ id: sessionId }));
      },
    }),
  );
  const interrupt = useMutation(trpc.events.send.mutationOptions());

  const failed = send.error ?? interrupt.error;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const body = text.trim();
    if (!body) return;
    if (pending.current?.text !== body) pending.current = { text: body, key: crypto.randomUUID() };
    send.mutate({ sessionId, event: { type: 'user.message', content: [{ type: 'text', text: body }] }, idempotencyKey: pending.current.key });
    onSend?.();
  };

  return (
    <form className="composer" onSubmit={submit}>
      <textarea
        data-testid="composer-input"
        value={text}
        placeholder={ended ? 'This session has ended (terminated): it takes no more messages.' : 'Message the agent…  (Enter to send, Shift+Enter for a new line)'}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey) submit(e);
        }}
        disabled={disabled || ended}
        rows={3}
      />
      <div className="composer-actions">
        {busy && (
          <button type="button" data-testid="interrupt" onClick={() => interrupt.mutate({ sessionId, event: { type: 'user.interrupt' } })}>
            Interrupt
          </button>
        )}
        <button type="submit" className="primary" data-testid="send" disabled={disabled || ended || send.isPending || text.trim() === ''}>
          Send
        </button>
      </div>
      {failed && (
        <p className="error" role="alert" data-testid="composer-error">
          {storeUnavailable(failed) ? 'Not sent: the database is unreachable. Your message is kept here; send it again once the session is back.' : failed.message}
        </p>
      )}
    </form>
  );
}
