'use client';
import { type KeyboardEvent, useMemo, useState } from 'react';
import '~/app/_components/ide/ide.css';

interface Folder {
  name: string;
  path: string;
  folders: Folder[];
  files: { name: string; path: string }[];
}

/** Folders first, then files, each alphabetical (case-insensitive, like most editors). */
function buildTree(paths: readonly string[]): Folder {
  const root: Folder = { name: '', path: '', folders: [], files: [] };
  const index = new Map<string, Folder>([['', root]]);
  for (const p of paths) {
    const parts = p.split('/').filter(Boolean);
    const name = parts.pop();
    if (name === undefined) continue;
    let parent = root;
    for (const part of parts) {
      const path = parent.path ? `${parent.path}/${part}` : part;
      let f = index.get(path);
      if (!f) {
        f = { name: part, path, folders: [], files: [] };
        index.set(path, f);
        parent.folders.push(f);
      }
      parent = f;
    }
    parent.files.push({ name, path: parts.length ? `${parts.join('/')}/${name}` : name });
  }
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base', numeric: true });
  for (const f of index.values()) {
    f.folders.sort(byName);
    f.files.sort(byName);
  }
  return root;
}

function ancestors(path: string | null): string[] {
  if (!path) return [];
  const parts = path.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** Above this many files folders start closed: opening all of node_modules helps no one. */
const OPEN_ALL_UP_TO = 200;

/**
 * The workspace as a collapsible tree. Every row is a button (Tab reaches it, Enter/Space
 * activates); arrow keys move between rows, and Left/Right close and open folders.
 */
export function FileTree({ files, selected, onSelect }: { files: readonly string[]; selected: string | null; onSelect: (path: string) => void }) {
  const tree = useMemo(() => buildTree(files), [files]);
  const openByDefault = files.length <= OPEN_ALL_UP_TO;
  // Folders the user flipped away from the default; the selected file's folders always show.
  const [flipped, setFlipped] = useState<ReadonlySet<string>>(() => new Set());
  const [shownSelection, setShownSelection] = useState<string | null>(null);
  if (selected !== shownSelection) {
    // A new selection (maybe from outside: the agent opened a file) reveals its folders.
    setShownSelection(selected);
    const hidden = ancestors(selected).filter((a) => flipped.has(a) === openByDefault);
    if (hidden.length > 0) setFlipped((prev) => toggled(prev, hidden));
  }
  const isOpen = (path: string) => flipped.has(path) !== openByDefault;
  const toggle = (path: string) => setFlipped((prev) => toggled(prev, [path]));

  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    const target = e.target as HTMLElement;
    if (!(target instanceof HTMLButtonElement)) return;
    const buttons = [...e.currentTarget.querySelectorAll<HTMLButtonElement>('button.ft-row')];
    const i = buttons.indexOf(target);
    const folder = target.dataset.folder;
    const move = (j: number) => buttons[Math.max(0, Math.min(buttons.length - 1, j))]?.focus();
    switch (e.key) {
      case 'ArrowDown':
        move(i + 1);
        break;
      case 'ArrowUp':
        move(i - 1);
        break;
      case 'Home':
        move(0);
        break;
      case 'End':
        move(buttons.length - 1);
        break;
      case 'ArrowRight':
        if (folder !== undefined && !isOpen(folder)) toggle(folder);
        else move(i + 1);
        break;
      case 'ArrowLeft': {
        if (folder !== undefined && isOpen(folder)) toggle(folder);
        else {
          // Up to the parent folder, as in every tree view.
          const parent = ancestors(folder ?? target.dataset.path ?? '').pop();
          const up = parent === undefined ? undefined : buttons.find((b) => b.dataset.folder === parent);
          up?.focus();
        }
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  };

  if (files.length === 0) {
    return (
      <div className="ft" data-testid="file-tree">
        <p className="muted small ft-empty">No files yet.</p>
      </div>
    );
  }

  const renderFolder = (f: Folder, depth: number) => (
    <ul className="ft-list" role="group">
      {f.folders.map((sub) => {
        const open = isOpen(sub.path);
        return (
          <li key={sub.path}>
            <button
              type="button"
              className="ft-row ft-folder"
              style={{ paddingLeft: 6 + depth * 14 }}
              aria-expanded={open}
              data-testid="folder-node"
              data-folder={sub.path}
              data-path={sub.path}
              title={sub.path}
              onClick={() => toggle(sub.path)}
            >
              <span className={`ft-caret${open ? ' ft-caret-open' : ''}`} aria-hidden />
              <span className="ft-name">{sub.name}</span>
            </button>
            {open && renderFolder(sub, depth + 1)}
          </li>
        );
      })}
      {f.files.map((file) => {
        const active = file.path === selected;
        return (
          <li key={file.path}>
            <button
              type="button"
              className={`ft-row ft-file${active ? ' ft-selected' : ''}`}
              style={{ paddingLeft: 6 + depth * 14 + 14 }}
              aria-current={active ? 'true' : undefined}
              data-testid="file-node"
              data-path={file.path}
              data-selected={active || undefined}
              title={file.path}
              onClick={() => onSelect(file.path)}
            >
              <span className={`ft-icon ft-ext-${extension(file.name)}`} aria-hidden />
              <span className="ft-name">{file.name}</span>
            </button>
          </li>
        );
      })}
    </ul>
  );

  return (
    <nav className="ft" data-testid="file-tree" aria-label="Files" onKeyDown={onKeyDown}>
      {renderFolder(tree, 0)}
    </nav>
  );
}

function toggled(set: ReadonlySet<string>, paths: readonly string[]): ReadonlySet<string> {
  const next = new Set(set);
  for (const p of paths) if (!next.delete(p)) next.add(p);
  return next;
}

/** A coarse file type for the icon colour. */
function extension(name: string): string {
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  if (['ts', 'tsx', 'mts', 'cts'].includes(ext)) return 'ts';
  if (['js', 'jsx', 'mjs', 'cjs'].includes(ext)) return 'js';
  if (['json', 'md', 'css', 'html', 'yml', 'yaml', 'toml'].includes(ext)) return ext === 'yml' ? 'yaml' : ext;
  return 'other';
}
