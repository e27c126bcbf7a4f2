'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useTRPC } from '~/lib/browser/trpc';

/** What a first message can be: the demo brain's commands, or tasks that show a model's hands at work. */
const DEMO = ['write notes.txt: hello from Paddock', 'read notes.txt', 'files'];
const MODEL = [
  'Write a Python script that prints the first 20 primes, run it, and show me the output.',
  'Create a small Node.js project with a test, and run the test.',
  'What tools and hands do you have here? Try each one briefly.',
];

/** An empty session's first screen: a few prompts to start from, each sent with one click. */
export function ExamplePrompts({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const brain = useQuery(trpc.sessions.brain.queryOptions(undefined, { staleTime: Infinity }));
  const send = useMutation(trpc.events.send.mutationOptions());
  if (!brain.data) return null;
  const prompts = brain.data.isDemo ? DEMO : MODEL;
  return (
    <div className="examples" data-testid="example-prompts">
      <p className="muted small">Start with one of these, or write your own below:</p>
      <ul>
        {prompts.map((p) => (
          <li key={p}>
            <button type="button" className="example" disabled={send.isPending || send.isSuccess} onClick={() => send.mutate({ sessionId, event: { type: 'user.message', content: [{ type: 'text', text: p }] }, idempotencyKey: `example-${sessionId}` })}>
              {p}
            </button>
          </li>
        ))}
      </ul>
      {send.error && <p className="small error">{send.error.message}</p>}
    </div>
  );
}
