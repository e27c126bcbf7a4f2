'use client';
import { type McpPolicy, type McpRow, newMcpRow } from '~/app/_components/mcp-servers/mcp-rows';
import { TestConnection } from '~/app/_components/mcp-servers/test-connection';

const MAX_SERVERS = 20;

/** The agent's MCP servers: name and URL per row, whether its tools are offered, and how they are allowed. */
export function McpServersFieldset({ rows, onChange }: { rows: McpRow[]; onChange: (rows: McpRow[]) => void }) {
  const set = (key: string, patch: Partial<McpRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <fieldset data-testid="mcp-servers">
      <legend>MCP servers</legend>
      <p className="muted small">Tools of remote MCP servers, called through Paddock&apos;s proxy with the credential a session&apos;s vaults hold for the URL (Settings → Vaults). Test connection tries your vaults.</p>
      {rows.map((r) => (
        <div key={r.key} className="mcp-server-row" data-testid="mcp-server-row">
          <label>
            Name
            <input className="mono" value={r.name} required maxLength={64} pattern="[A-Za-z0-9_\-]+" title="letters, digits, _ or -" data-testid="mcp-server-name" onChange={(e) => set(r.key, { name: e.target.value })} />
          </label>
          <label className="mcp-url">
            URL
            <input className="mono" type="url" value={r.url} required maxLength={2048} placeholder="https://mcp.example.com/mcp" data-testid="mcp-server-url" onChange={(e) => set(r.key, { url: e.target.value })} />
          </label>
          <label className="check">
            <input type="checkbox" checked={r.offered} data-testid="mcp-server-offered" onChange={(e) => set(r.key, { offered: e.target.checked })} />
            offer its tools
          </label>
          <select aria-label={`${r.name || 'server'} permission`} data-testid="mcp-server-policy" value={r.policy} disabled={!r.offered} onChange={(e) => set(r.key, { policy: e.target.value as McpPolicy })}>
            <option value="always_ask">ask first</option>
            <option value="always_allow">always allow</option>
          </select>
          <button type="button" className="quiet" onClick={() => onChange(rows.filter((x) => x.key !== r.key))}>
            Remove
          </button>
          <TestConnection url={r.url} />
        </div>
      ))}
      <button type="button" data-testid="add-mcp-server" disabled={rows.length >= MAX_SERVERS} onClick={() => onChange([...rows, newMcpRow(crypto.randomUUID())])}>
        Add MCP server
      </button>
    </fieldset>
  );
}
