'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { CopyButton } from '~/app/_components/copy-button/copy-button';
import { useTRPC } from '~/lib/browser/trpc';
import { useHydrated } from '~/lib/browser/use-hydrated';

/** The README's example, with this server's address: what a program runs first. */
export function sdkSnippet(origin: string): string {
  return `import Anthropic from '@anthropic-ai/sdk';
const client = new Anthropic({ baseURL: '${origin}', apiKey: process.env.PADDOCK_API_KEY });
const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
const stream = await client.beta.sessions.events.stream(session.id);
await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'List the files' }] }] });
for await (const e of stream) {
  if (e.type === 'agent.message') console.log(e.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
  if (e.type === 'session.status_idle') break;
}`;
}

/** The empty home page: the three things a person does first, each one click or one copy away. */
export function FirstSteps() {
  const trpc = useTRPC();
  const hydrated = useHydrated();
  const brain = useQuery(trpc.sessions.brain.queryOptions(undefined, { staleTime: Infinity }));
  const create = useMutation(
    trpc.sessions.create.mutationOptions({
      // A full page load: only it gets the session page's COOP/COEP (the tab hand needs them).
      onSuccess: (s) => window.location.assign(`/s/${s.id}`),
    }),
  );
  const origin = hydrated ? window.location.origin : 'http://localhost:3000';
  const demo = brain.data?.isDemo !== false;
  return (
    <ol className="first-steps" data-testid="first-steps">
      <li>
        <h2>{demo ? 'Try the demo' : 'Start a session'}</h2>
        <p className="muted small">
          {demo ? 'A session on the demo brain: canned answers, real tools, real hands. Pick an example prompt there.' : 'A session with the default agent and environment.'}
        </p>
        <button type="button" className="primary" data-testid="first-steps-demo" disabled={!hydrated || create.isPending} onClick={() => create.mutate({})}>
          {demo ? 'Try the demo' : 'New session'}
        </button>
        {create.error && <p className="error small">{create.error.message}</p>}
      </li>
      <li>
        <h2>Set a model key</h2>
        {demo ? (
          <p className="muted small">
            Set <code>ANTHROPIC_API_KEY</code> (or <code>ANTHROPIC_BASE_URL</code> for a local model) where the server starts, and restart it: sessions then run on Claude.
          </p>
        ) : (
          <p className="muted small" data-testid="first-steps-model-set">
            Done: sessions run on {brain.data?.label}.
          </p>
        )}
      </li>
      <li>
        <h2>Drive it from a program</h2>
        <p className="muted small">
          <a href="/settings">Make an API key</a>, put it in <code>PADDOCK_API_KEY</code>, and run this with the official SDK (<code>npx tsx example.mts</code>):
        </p>
        <div className="snippet">
          <CopyButton text={sdkSnippet(origin)} testId="first-steps-copy" />
          <pre data-testid="first-steps-snippet">{sdkSnippet(origin)}</pre>
        </div>
      </li>
    </ol>
  );
}
