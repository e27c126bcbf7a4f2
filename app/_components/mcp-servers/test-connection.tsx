'use client';
import { useMutation } from '@tanstack/react-query';
import { probeText } from '~/app/_components/mcp-servers/probe-status';
import { useTRPC } from '~/lib/browser/trpc';

/** "Test connection" for one server URL: lists its tools with the credential a vault holds for it. */
export function TestConnection({ url }: { url: string }) {
  const trpc = useTRPC();
  const probe = useMutation(trpc.agents.testMcpServer.mutationOptions());
  const result = probe.data;
  // A result is for the URL it was asked about: editing the URL hides it.
  const current = result && probe.variables?.url === url.trim();
  return (
    <div className="mcp-test">
      <button type="button" data-testid="mcp-test-connection" disabled={probe.isPending || url.trim() === ''} onClick={() => probe.mutate({ url: url.trim() })}>
        {probe.isPending ? 'Testing…' : 'Test connection'}
      </button>
      {(probe.error || current) && (
        <span className={`small ${probe.error || result?.status !== 'ok' ? 'error' : 'muted'}`} data-testid="mcp-test-status" data-status={probe.error ? 'failed' : result?.status} role="status">
          {probe.error ? probe.error.message : result ? probeText(result) : null}
        </span>
      )}
    </div>
  );
}
