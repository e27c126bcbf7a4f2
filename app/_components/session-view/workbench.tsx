'use client';
import '~/app/_components/session-view/outage-note.css';
import { useEffect, useMemo, useState } from 'react';
import { CodeEditor } from '~/app/_components/ide/code-editor';
import { FileTree } from '~/app/_components/ide/file-tree';
import { HandSwitcher } from '~/app/_components/ide/hand-switcher';
import { PanePlaceholder } from '~/app/_components/ide/pane-placeholder';
import { Panel, PersistedGroup, ResizeHandle } from '~/app/_components/resizable/resizable';
import { TerminalView } from '~/app/_components/ide/terminal-view';
import { HandsPanel } from '~/app/_components/session-view/hands-panel';
import { useReadOnly } from '~/app/_components/session-view/read-only';
import { useHandFiles } from '~/app/_components/session-view/use-hand-files';
import type { HandProgress } from '~/app/_components/session-view/use-session-log';
import type { StoredEvent } from '~/lib/events';
import { terminalChunks } from '~/app/_components/session-view/terminal-chunks';
import { type Outage, TabHandControl } from '~/app/_components/session-view/tab-hand-control';
import type { BrowserHandState } from '~/lib/browser/use-browser-hand';
import { currentHand, handsInLog } from '~/lib/hand-log';

export function Workbench({
  sessionId,
  events,
  progress,
  browser,
  browserEnabled,
  onToggleBrowser,
  pane = null,
  onFileOpened,
  hideFiles = false,
  tabHandOffered = true,
  outage = null,
}: {
  sessionId: string;
  events: readonly StoredEvent[];
  progress: HandProgress;
  browser: BrowserHandState;
  browserEnabled: boolean;
  onToggleBrowser: () => void;
  /** At phone width, the one pane shown (the page's tabs pick it); null: all, side by side. */
  pane?: 'files' | 'editor' | 'terminal' | null;
  /** A file was picked in the tree (at phone width the page then shows the editor tab). */
  onFileOpened?: () => void;
  /** A share link the owner made without the hands' files: the tree and editor stay empty. */
  hideFiles?: boolean;
  /** False once the session has ended or is archived: no tab can serve it. */
  tabHandOffered?: boolean;
  outage?: Outage;
}) {
  const readOnly = useReadOnly();
  const records = useMemo(() => handsInLog(events), [events]);
  const terminal = useMemo(() => terminalChunks(events), [events]);
  const current = currentHand(records)?.id ?? null;
  const [picked, setPicked] = useState<string | null>(null);
  const hand = picked ?? current;
  const [file, setFile] = useState<string | null>(null);
  const [content, setContent] = useState('');
  const [fileError, setFileError] = useState<string | null>(null);
  const resultsCount = events.filter((e) => e.type === 'agent.tool_result' || e.type === 'user.tool_result' || e.type === 'user.file_edit').length;
  const version = resultsCount + browser.filesVersion;
  const own = browser.hand !== null && hand === browser.hand;
  const { files, read, write, unavailable } = useHandFiles(sessionId, hideFiles ? null : hand, browser.engine, own, version, { thisTabServes: browserEnabled, outage });
  // A server-side hand's files come from the server: during an outage the tree is its last listing.
  const staleFiles = outage !== null && hand !== null && !hand.startsWith('browser-') && !unavailable;

  useEffect(() => {
    setFile(null);
  }, [hand]);
  useEffect(() => {
    if (!file) return;
    let live = true;
    read(file).then(
      (c) => {
        if (!live) return;
        setContent(c);
        setFileError(null);
      },
      (e: unknown) => live && setFileError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [file, read, version]);

  const side = (
    <div className="wb-left">
      {!readOnly && <TabHandControl browser={browser} enabled={browserEnabled} onToggle={onToggleBrowser} offered={tabHandOffered} outage={outage} />}
      <HandsPanel events={events} progress={progress} stale={outage} />
      {records.length > 0 && <HandSwitcher hands={records} selected={hand} onSelect={setPicked} />}
      {hideFiles ? (
        <PanePlaceholder testId="files-hidden" title="Files not shared" hint="The owner shares this session without its hands' files." />
      ) : unavailable ? (
        <p className="small muted">{unavailable}</p>
      ) : hand === null ? (
        <PanePlaceholder testId="files-empty" title="No files yet" hint="The workspace appears once the agent (or this tab) provides a hand." />
      ) : (
        <>
          {staleFiles && (
            <p className="small outage-note" data-testid="files-stale">
              {outage === 'server' ? 'The server cannot be reached' : 'The database is unreachable'}: these are the files as last listed; they refresh once it is back.
            </p>
          )}
          <FileTree
            files={files}
            selected={file}
            onSelect={(f) => {
              setFile(f);
              onFileOpened?.();
            }}
          />
        </>
      )}
    </div>
  );
  const editor = (
    <div className="wb-editor">
      {file ? (
        fileError ? (
          <p className="error small">{fileError}</p>
        ) : (
          <CodeEditor path={file} value={content} readOnly={readOnly} onSave={(c) => (readOnly ? Promise.resolve() : write(file, c))} />
        )
      ) : (
        <PanePlaceholder
          testId="editor-empty"
          title="No file open"
          hint={hand ? 'Pick a file in the tree to open it here.' : 'No hand yet: files appear once the agent (or this tab) provides one.'}
        />
      )}
    </div>
  );
  const terminalPane = (
    <div className="wb-terminal">
      {terminal.length > 0 ? <TerminalView chunks={terminal} /> : <PanePlaceholder testId="terminal-empty" title="No commands yet" hint="Every shell command of this session appears here, whichever hand runs it." />}
    </div>
  );

  if (pane !== null) {
    // Phone width: one pane at a time, full width; all stay mounted so switching keeps state.
    return (
      <div className="workbench-narrow">
        <div className="pane" hidden={pane !== 'files'}>
          {side}
        </div>
        <div className="pane" hidden={pane !== 'editor'}>
          {editor}
        </div>
        <div className="pane" hidden={pane !== 'terminal'}>
          {terminalPane}
        </div>
      </div>
    );
  }
  return (
    <PersistedGroup id="layout-workbench" orientation="horizontal" className="workbench">
      <Panel id="pane-files" defaultSize="25%" minSize="140px" className="pane">
        {side}
      </Panel>
      <ResizeHandle id="resize-files" />
      <Panel id="pane-main" minSize="200px" className="pane">
        <PersistedGroup id="layout-editor" orientation="vertical" className="wb-main">
          <Panel id="pane-editor" defaultSize="70%" minSize="80px" className="pane">
            {editor}
          </Panel>
          <ResizeHandle id="resize-terminal" />
          <Panel id="pane-terminal" defaultSize="30%" minSize="60px" className="pane">
            {terminalPane}
          </Panel>
        </PersistedGroup>
      </Panel>
    </PersistedGroup>
  );
}
