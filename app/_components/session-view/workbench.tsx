'use client';
import { useEffect, useMemo, useState } from 'react';
import { CodeEditor } from '~/app/_components/ide/code-editor';
import { FileTree } from '~/app/_components/ide/file-tree';
import { HandSwitcher } from '~/app/_components/ide/hand-switcher';
import { PanePlaceholder } from '~/app/_components/ide/pane-placeholder';
import { TerminalView } from '~/app/_components/ide/terminal-view';
import { HandsPanel } from '~/app/_components/session-view/hands-panel';
import { useHandFiles } from '~/app/_components/session-view/use-hand-files';
import type { HandProgress } from '~/app/_components/session-view/use-session-log';
import type { StoredEvent } from '~/lib/events';
import { terminalChunks } from '~/app/_components/session-view/terminal-chunks';
import type { BrowserHandState } from '~/lib/browser/use-browser-hand';
import { currentHand, handsInLog } from '~/lib/hand-log';

export function Workbench({
  sessionId,
  events,
  progress,
  browser,
  browserEnabled,
  onToggleBrowser,
}: {
  sessionId: string;
  events: readonly StoredEvent[];
  progress: HandProgress;
  browser: BrowserHandState;
  browserEnabled: boolean;
  onToggleBrowser: () => void;
}) {
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
  const { files, read, write, unavailable } = useHandFiles(sessionId, hand, browser.engine, own, version);

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

  return (
    <div className="workbench">
      <div className="wb-left">
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
        <HandsPanel events={events} progress={progress} />
        {records.length > 0 && <HandSwitcher hands={records} selected={hand} onSelect={setPicked} />}
        {unavailable ? (
          <p className="small muted">{unavailable}</p>
        ) : hand === null ? (
          <PanePlaceholder testId="files-empty" title="No files yet" hint="The workspace appears once the agent (or this tab) provides a hand." />
        ) : (
          <FileTree files={files} selected={file} onSelect={setFile} />
        )}
      </div>
      <div className="wb-main">
        <div className="wb-editor">
          {file ? (
            fileError ? (
              <p className="error small">{fileError}</p>
            ) : (
              <CodeEditor path={file} value={content} onSave={(c) => write(file, c)} />
            )
          ) : (
            <PanePlaceholder
              testId="editor-empty"
              title="No file open"
              hint={hand ? 'Pick a file in the tree to open it here.' : 'No hand yet: files appear once the agent (or this tab) provides one.'}
            />
          )}
        </div>
        <div className="wb-terminal">
          {terminal.length > 0 ? <TerminalView chunks={terminal} /> : <PanePlaceholder testId="terminal-empty" title="No commands yet" hint="Every shell command of this session appears here, whichever hand runs it." />}
        </div>
      </div>
    </div>
  );
}
