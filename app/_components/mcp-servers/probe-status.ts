/** What "Test connection" answered (agents.testMcpServer). */
export type ProbeResult = { status: 'ok'; tools: string[] } | { status: 'unauthorized' | 'unreachable' | 'error'; message: string };

const SHOWN_TOOLS = 5;

/** The line shown next to a server row. */
export function probeText(r: ProbeResult): string {
  switch (r.status) {
    case 'ok': {
      if (r.tools.length === 0) return 'Connected: the server offers no tools';
      const more = r.tools.length > SHOWN_TOOLS ? '…' : '';
      return `${r.tools.length} ${r.tools.length === 1 ? 'tool' : 'tools'}: ${r.tools.slice(0, SHOWN_TOOLS).join(', ')}${more}`;
    }
    case 'unauthorized':
      return 'The server refused the credential: add one in Settings → Vaults';
    case 'unreachable':
      return r.message;
    case 'error':
      return `The server answered, but not as an MCP server should: ${r.message}`;
  }
}
