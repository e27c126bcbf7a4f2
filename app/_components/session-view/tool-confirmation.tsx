'use client';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { ToolCall } from '~/app/_components/session-view/derive';
import { useReadOnly } from '~/app/_components/session-view/read-only';
import { useTRPC } from '~/lib/browser/trpc';

/**
 * The owner's say on a call whose policy asks first: Allow runs it, Deny answers the model with
 * the message (or a default). Once a verdict is in the log the prompt shows it instead.
 */
export function ToolConfirmation({ sessionId, call }: { sessionId: string; call: ToolCall }) {
  const trpc = useTRPC();
  const [denying, setDenying] = useState(false);
  const [message, setMessage] = useState('');
  const send = useMutation(trpc.events.send.mutationOptions());
  const readOnly = useReadOnly();
  const who = readOnly ? 'The owner' : 'You';

  if (call.confirmation) {
    const c = call.confirmation;
    return (
      <div className={`confirm confirm-${c.result}`} data-testid="tool-verdict">
        {c.result === 'allow' ? `${who} allowed this call.` : `${who} denied this call${c.deny_message ? `: ${c.deny_message}` : '.'}`}
      </div>
    );
  }
  // Answered without a verdict: given up by a new message or an interrupt (the result says so).
  if (call.result) return null;
  if (readOnly) {
    return (
      <div className="confirm" data-testid="tool-awaits-owner">
        <strong>{call.use.name}</strong> waits for the owner&apos;s approval.
      </div>
    );
  }

  const verdict = (result: 'allow' | 'deny') =>
    send.mutate({ sessionId, event: { type: 'user.tool_confirmation', tool_use_id: call.use.id, result, ...(result === 'deny' && message.trim() ? { deny_message: message.trim() } : {}) } });
  // The verdict is on its way: shown at once, the stored event replaces it.
  const sent = send.isSuccess ? send.variables.event : null;
  if (sent?.type === 'user.tool_confirmation') {
    return (
      <div className={`confirm confirm-${sent.result}`} data-testid="tool-verdict">
        {sent.result === 'allow' ? 'Allowed; running…' : 'Denied.'}
      </div>
    );
  }

  return (
    <div className="confirm" data-testid="tool-confirm" role="group" aria-label={`Allow ${call.use.name}?`}>
      <div>
        <strong>{call.use.name}</strong> waits for your approval.
      </div>
      {denying && (
        <input
          data-testid="deny-message"
          aria-label="Why (optional, the agent reads it)"
          placeholder="why not (optional, the agent reads it)"
          value={message}
          maxLength={2000}
          onChange={(e) => setMessage(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !send.isPending) verdict('deny');
          }}
          autoFocus
        />
      )}
      <div className="confirm-actions">
        <button type="button" className="primary" data-testid="tool-allow" disabled={send.isPending} onClick={() => verdict('allow')}>
          Allow
        </button>
        {denying ? (
          <button type="button" data-testid="tool-deny-send" disabled={send.isPending} onClick={() => verdict('deny')}>
            Deny
          </button>
        ) : (
          <button type="button" data-testid="tool-deny" disabled={send.isPending} onClick={() => setDenying(true)}>
            Deny…
          </button>
        )}
      </div>
      {send.error && (
        <p className="error" role="alert">
          {send.error.message}
        </p>
      )}
    </div>
  );
}
