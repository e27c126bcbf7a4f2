'use client';
import { useMemo, useState } from 'react';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { CodeEditor } from '~/app/_components/ide/code-editor';
import { FileTree } from '~/app/_components/ide/file-tree';
import { HandSwitcher } from '~/app/_components/ide/hand-switcher';
import { TerminalView } from '~/app/_components/ide/terminal-view';
import { Waterfall } from '~/app/_components/ide/waterfall';

/* A preview of the IDE leaves with fake data, for looking at them (and poking them) in a browser. */

const FILES = [
  'README.md',
  'package.json',
  'tsconfig.json',
  '.gitignore',
  'src/index.ts',
  'src/server.ts',
  'src/routes/health.ts',
  'src/routes/users.ts',
  'src/lib/db.ts',
  'src/lib/log.js',
  'src/styles/app.css',
  'test/server.test.ts',
  'test/users.test.ts',
  'public/index.html',
  'scripts/seed.mjs',
  'docs/api.md',
].sort();

const SERVER_TS = `import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { health } from './routes/health';
import { listUsers } from './routes/users';

/** Routes by exact path; anything else is a 404. */
const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>> = {
  '/health': health,
  '/users': listUsers,
};

export function start(port = Number(process.env.PORT ?? 3000)) {
  const server = createServer(async (req, res) => {
    const route = routes[req.url ?? ''];
    if (!route) {
      res.writeHead(404).end('not found');
      return;
    }
    try {
      await route(req, res);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  server.listen(port, () => console.log(\`listening on :\${port}\`));
  return server;
}
`;

const CONTENT: Record<string, string> = {
  'src/server.ts': SERVER_TS,
  'package.json': '{\n  "name": "demo-api",\n  "type": "module",\n  "scripts": { "test": "node --test" }\n}\n',
};

const CHUNKS = [
  '\x1b[1;32m$\x1b[0m npm test\n',
  '\n> demo-api@1.0.0 test\n> node --test\n\n',
  '\x1b[32m✔\x1b[0m GET /health answers 200 \x1b[90m(12.4ms)\x1b[0m\n',
  '\x1b[32m✔\x1b[0m GET /users lists seeded users \x1b[90m(48.1ms)\x1b[0m\n',
  '\x1b[31m✖\x1b[0m POST /users rejects a missing name \x1b[90m(3.2ms)\x1b[0m\n',
  '  \x1b[31mAssertionError\x1b[0m: expected 400, got \x1b[1m500\x1b[0m\n      at test/users.test.ts:41:12\n',
  '\x1b[36mℹ\x1b[0m tests 3  \x1b[32mpass 2\x1b[0m  \x1b[31mfail 1\x1b[0m  duration_ms 812\n',
  '\x1b[1;32m$\x1b[0m \x1b[33mnpm run build\x1b[0m\n',
];

const HANDS = [
  { id: 'sandbox-1', kind: 'sandbox', status: 'lost' },
  { id: 'sandbox-2', kind: 'sandbox', status: 'ready' },
  { id: 'browser-1', kind: 'browser', status: 'starting' },
];

const T0 = Date.UTC(2025, 5, 1, 12, 0, 0);
const USAGE = (input: number, output: number, read = 0) => ({ input_tokens: input, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: read });

/** A synthetic session: ~20 steps, one slow tool (the test run), one failing tool, one still running. */
function fakeLog(): { events: StoredEvent[]; now: number } {
  const events: StoredEvent[] = [];
  const add = (atMs: number, e: NewEvent): StoredEvent => {
    const seq = events.length + 1;
    const s = { ...e, id: `sevt_${String(seq).padStart(26, '0')}`, session_id: 'sesn_preview', seq, processed_at: new Date(T0 + atMs).toISOString() };
    events.push(s);
    return s;
  };
  let t = 0;
  add(t, { type: 'user.message', content: [{ type: 'text', text: 'Make the tests pass.' }] });
  add((t += 40), { type: 'session.status_running' });
  const tools = [
    { name: 'glob', ms: 90 },
    { name: 'read', ms: 60 },
    { name: 'read', ms: 45 },
    { name: 'bash', ms: 7400 }, // the slow one: a test run
    { name: 'grep', ms: 120 },
    { name: 'edit', ms: 80, error: true },
    { name: 'read', ms: 50 },
    { name: 'edit', ms: 70 },
    { name: 'bash', ms: 2600 },
  ];
  let turn = 0;
  for (const tool of tools) {
    turn++;
    const ttft = 420 + ((turn * 173) % 600);
    const duration = ttft + 600 + ((turn * 389) % 1900);
    const start = add((t += 15), { type: 'span.model_request_start', model: 'claude-sonnet-4-5' });
    t += duration;
    add(t, { type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: USAGE(1800 + turn * 900, 120 + turn * 40, 1500 + turn * 800), ttft_ms: ttft, duration_ms: duration, model_stop_reason: 'tool_use' });
    const use = add(t, { type: 'agent.tool_use', name: tool.name, input: {}, model_tool_use_id: `toolu_${turn}`, hand: 'sandbox-2' });
    if (turn === 1) add((t += 30), { type: 'hand.provisioned', hand: 'sandbox-2', kind: 'sandbox', provision_ms: 640 });
    t += tool.ms;
    add(t, { type: 'agent.tool_result', tool_use_id: use.id, is_error: tool.error ?? false, hand: 'sandbox-2' });
  }
  const start = add((t += 15), { type: 'span.model_request_start', model: 'claude-sonnet-4-5' });
  t += 1900;
  add(t, { type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: USAGE(14000, 210, 12000), ttft_ms: 700, duration_ms: 1900, model_stop_reason: 'tool_use' });
  add(t, { type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: 'toolu_last', hand: 'sandbox-2' });
  return { events, now: T0 + t + 3200 };
}

export default function IdePreviewPage() {
  const [selected, setSelected] = useState<string | null>('src/server.ts');
  const [hand, setHand] = useState<string | null>('sandbox-2');
  const [files, setFiles] = useState<Record<string, string>>(CONTENT);
  const [saves, setSaves] = useState(0);
  const [chunks, setChunks] = useState(CHUNKS);
  const { events, now } = useMemo(fakeLog, []);
  const path = selected ?? 'README.md';
  const value = files[path] ?? `// ${path}\n`;

  const onSave = async (content: string) => {
    await new Promise((r) => setTimeout(r, 150));
    setFiles((f) => ({ ...f, [path]: content }));
    setSaves((n) => n + 1);
  };
  // The agent rewriting the open file, as a tool call would.
  const agentEdit = () => setFiles((f) => ({ ...f, [path]: `// edited by the agent at ${new Date().toISOString()}\n${f[path] ?? value}` }));

  return (
    <main style={{ padding: 12, height: 'calc(100vh - 45px)', display: 'grid', gridTemplateRows: 'auto minmax(0, 1fr) 330px', gap: 10 }}>
      <div style={{ display: 'flex', gap: 12, alignItems: 'center' }}>
        <h1 style={{ fontSize: 16 }}>IDE components preview</h1>
        <HandSwitcher hands={HANDS} selected={hand} onSelect={setHand} />
        <span style={{ flex: 1 }} />
        <span className="small muted" data-testid="preview-saves">
          saves: {saves}
        </span>
        <button type="button" onClick={agentEdit} data-testid="preview-agent-edit">
          Agent edits file
        </button>
        <button type="button" onClick={() => setChunks((c) => [...c, `\x1b[90m[${c.length}]\x1b[0m more output\n`])} data-testid="preview-append">
          Append output
        </button>
      </div>
      <div style={{ display: 'grid', gridTemplateColumns: '230px minmax(0, 1fr) minmax(0, 0.8fr)', gap: 10, minHeight: 0 }}>
        <div style={{ background: 'var(--panel)', border: '1px solid var(--border)', borderRadius: 8, minHeight: 0 }}>
          <FileTree files={FILES} selected={selected} onSelect={setSelected} />
        </div>
        <CodeEditor path={path} value={value} onSave={onSave} />
        <TerminalView chunks={chunks} />
      </div>
      <Waterfall events={events} now={now} />
    </main>
  );
}
