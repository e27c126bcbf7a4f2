'use client';
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
import { forgetWebContainerFailure, rememberedWebContainerFailure } from '~/lib/browser/engine/start-engine';
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
  const { files, read, write, unavailable } = useHandFiles(sessionId, hideFiles ? null : hand, browser.engine, own, version);

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
      {!readOnly && (
      <div className="browser-hand" data-testid="browser-hand" data-engine={browser.engine?.kind ?? ''}>
        <button type="button" data-testid="browser-hand-toggle" onClick={onToggleBrowser} className={browserEnabled ? '' : 'primary'}>
          {browserEnabled ? 'Stop using this tab' : 'Use this tab as a hand'}
        </button>
        {browserEnabled && (
          <div className="small muted" data-testid="browser-hand-status">
            {browser.engine ? (
              <>
                <strong data-testid="engine-kind">{browser.engine.kind === 'webcontainer' ? 'WebContainer' : 'offline engine'}</strong>
                {browser.hand ? ` · ${browser.hand}` : ''}
                <div data-testid="engine-reason">{browser.engine.reason}</div>
                {browser.engine.kind !== 'webcontainer' && rememberedWebContainerFailure() && (
                  <button
                    type="button"
                    className="small"
                    data-testid="retry-webcontainer"
                    onClick={() => {
                      forgetWebContainerFailure();
                      window.location.reload();
                    }}
                  >
                    Try WebContainer again
                  </button>
                )}
              </>
            ) : (
              browser.status
            )}
            {browser.error && <div className="error">{browser.error}</div>}
            {Object.entries(browser.previews).map(([port, url]) => (
              <div key={port} data-testid="preview-url">
                preview :{port}{' '}
                <a href={url} target="_blank" rel="noreferrer">
                  {url}
                </a>
              </div>
            ))}
          </div>
        )}
      </div>
      )}
      <HandsPanel events={events} progress={progress} />
      {records.length > 0 && <HandSwitcher hands={records} selected={hand} onSelect={setPicked} />}
      {hideFiles ? (
        <PanePlaceholder testId="files-hidden" title="Files not shared" hint="The owner shares this session without its hands' files." />
      ) : unavailable ? (
        <p className="small muted">{unavailable}</p>
      ) : hand === null ? (
        <PanePlaceholder testId="files-empty" title="No files yet" hint="The workspace appears once the agent (or this tab) provides a hand." />
      ) : (
        <FileTree
            files={files}
            selected={file}
            onSelect={(f) => {
              setFile(f);
              onFileOpened?.();
            }}
          />
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
