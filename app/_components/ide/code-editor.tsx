'use client';
import { useEffect, useRef, useState } from 'react';
import { basicSetup } from 'codemirror';
import { javascript } from '@codemirror/lang-javascript';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { Compartment, EditorState, type Extension, Prec } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import '~/app/_components/ide/ide.css';

// `@codemirror/language` and `@lezer/highlight` come with `codemirror` (its own dependencies, one
// copy each): the dark highlight style needs them, as basicSetup's default one is for light themes.

const theme = EditorView.theme(
  {
    '&': { height: '100%', color: 'var(--text)', backgroundColor: '#0b0d10', fontSize: '13px' },
    '&.cm-focused': { outline: 'none' },
    '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.55' },
    '.cm-content': { caretColor: 'var(--accent)', padding: '6px 0' },
    '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--accent)', borderLeftWidth: '2px' },
    '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection': {
      backgroundColor: '#2d3a55',
    },
    '.cm-gutters': { backgroundColor: '#0b0d10', color: '#4d5566', border: 'none', borderRight: '1px solid var(--border)' },
    '.cm-activeLineGutter': { backgroundColor: '#151922', color: 'var(--muted)' },
    '.cm-activeLine': { backgroundColor: '#ffffff08' },
    '.cm-foldPlaceholder': { backgroundColor: 'var(--panel-2)', border: '1px solid var(--border)', color: 'var(--muted)' },
    '.cm-matchingBracket, &.cm-focused .cm-matchingBracket': { backgroundColor: '#3a4358', outline: 'none' },
    '.cm-searchMatch': { backgroundColor: '#e0b34133', outline: '1px solid #e0b34166' },
    '.cm-searchMatch.cm-searchMatch-selected': { backgroundColor: '#e0b34166' },
    '.cm-selectionMatch': { backgroundColor: '#6c9ef826' },
    '.cm-panels': { backgroundColor: 'var(--panel)', color: 'var(--text)' },
    '.cm-panels.cm-panels-bottom': { borderTop: '1px solid var(--border)' },
    '.cm-tooltip': { backgroundColor: 'var(--panel-2)', border: '1px solid var(--border)', color: 'var(--text)' },
    '.cm-tooltip-autocomplete > ul > li[aria-selected]': { backgroundColor: '#2d3a55', color: 'var(--text)' },
  },
  { dark: true },
);

const highlight = syntaxHighlighting(
  HighlightStyle.define([
    { tag: [t.keyword, t.modifier, t.controlKeyword, t.operatorKeyword], color: '#c586e8' },
    { tag: [t.definitionKeyword, t.moduleKeyword], color: '#c586e8' },
    { tag: [t.string, t.special(t.string), t.regexp], color: '#9fd68c' },
    { tag: [t.number, t.bool, t.null, t.atom], color: '#f0a45d' },
    { tag: [t.comment, t.lineComment, t.blockComment], color: '#6b7386', fontStyle: 'italic' },
    { tag: [t.typeName, t.className, t.namespace], color: '#e8c46b' },
    { tag: [t.function(t.variableName), t.function(t.propertyName)], color: '#7fb0ff' },
    { tag: [t.definition(t.variableName), t.definition(t.propertyName)], color: '#e6e8ee' },
    { tag: t.propertyName, color: '#9cdcfe' },
    { tag: [t.operator, t.punctuation, t.bracket], color: '#a4abbb' },
    { tag: [t.tagName], color: '#f08b74' },
    { tag: [t.attributeName], color: '#e8c46b' },
    { tag: t.invalid, color: 'var(--err)' },
  ]),
);

const JS_EXTENSIONS = /\.(?:[cm]?js|jsx|[cm]?ts|tsx|json)$/i;

function language(path: string): Extension {
  if (!JS_EXTENSIONS.test(path)) return [];
  const lower = path.toLowerCase();
  return javascript({ typescript: /\.[cm]?tsx?$/.test(lower), jsx: lower.endsWith('x') });
}

const readOnlyMode = (readOnly: boolean): Extension => [EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)];

interface Props {
  /** Workspace-relative path: names the file and picks the language. */
  path: string;
  /** The file as it is on the hand. A new value replaces the text unless the user has unsaved edits. */
  value: string;
  /** Called with the text to write; a rejected promise is shown and keeps the edits unsaved. */
  onSave: (content: string) => void | Promise<void>;
  readOnly?: boolean;
  /** Optional: told when unsaved edits appear or go (to warn before switching files). */
  onDirtyChange?: (dirty: boolean) => void;
}

/**
 * A CodeMirror 6 editor for one workspace file. Ctrl/Cmd-S or the Save button save; when the file
 * changes on the hand while the user has unsaved edits, a notice offers to reload it.
 */
export function CodeEditor({ path, value, onSave, readOnly = false, onDirtyChange }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  // Per instance: a compartment lets one editor swap language or read-only mode in place.
  const [compartments] = useState(() => ({ lang: new Compartment(), ro: new Compartment() }));
  /** The file as last loaded or saved: the editor is dirty when its text differs from this. */
  const baseline = useRef(value);
  const loadedPath = useRef(path);
  const [dirty, setDirty] = useState(false);
  const [external, setExternal] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Callbacks from the editor's keymap and listener read the latest props through refs.
  const latest = useRef({ path, value, readOnly, onSave, onDirtyChange, save: async () => {} });

  const recomputeDirty = () => {
    const v = view.current;
    if (!v) return;
    const doc = v.state.doc;
    const base = baseline.current;
    setDirty(doc.length !== base.length || doc.toString() !== base);
  };

  const makeState = (doc: string, forPath: string, ro: boolean) =>
    EditorState.create({
      doc,
      extensions: [
        Prec.highest(
          keymap.of([
            {
              key: 'Mod-s',
              preventDefault: true, // never the browser's "Save page" dialog, even on a clean file
              run: () => {
                void latest.current.save();
                return true;
              },
            },
          ]),
        ),
        basicSetup,
        theme,
        highlight,
        compartments.lang.of(language(forPath)),
        compartments.ro.of(readOnlyMode(ro)),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) recomputeDirty();
        }),
      ],
    });

  const replaceDoc = (text: string) => {
    const v = view.current;
    if (!v) return;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text } });
  };

  const save = async () => {
    const v = view.current;
    const { readOnly: ro, onSave: write } = latest.current;
    if (!v || ro || saving) return;
    const content = v.state.doc.toString();
    // Nothing to write (Ctrl-S on a clean file) unless the hand's copy moved on under the user.
    if (content === baseline.current && external === null) return;
    setSaving(true);
    setError(null);
    try {
      await write(content);
      baseline.current = content;
      setExternal(null);
      recomputeDirty();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setSaving(false);
    }
  };

  useEffect(() => {
    latest.current = { path, value, readOnly, onSave, onDirtyChange, save };
  });

  useEffect(() => {
    onDirtyChange?.(dirty);
  }, [dirty, onDirtyChange]);

  // One view per mount. StrictMode runs this twice in development: the cleanup destroys the first.
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const { path: p, value: v, readOnly: ro } = latest.current;
    baseline.current = v;
    loadedPath.current = p;
    view.current = new EditorView({ state: makeState(v, p, ro), parent: el });
    return () => {
      view.current?.destroy();
      view.current = null;
    };
    // No dependencies on purpose: the view is built once and reads later props through `latest`.
  }, []);

  // The file changed from outside (another file opened, or the agent wrote this one).
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    if (path !== loadedPath.current) {
      // Another file: a fresh state, so undo history does not reach into the previous file.
      v.setState(makeState(value, path, readOnly));
      loadedPath.current = path;
      baseline.current = value;
      setExternal(null);
      setError(null);
      setDirty(false);
      return;
    }
    if (value === baseline.current) return;
    const doc = v.state.doc.toString();
    if (doc === value) {
      // The hand now holds exactly what is in the editor (often: our own save coming back).
      baseline.current = value;
      setExternal(null);
      setDirty(false);
    } else if (doc === baseline.current) {
      baseline.current = value;
      replaceDoc(value);
    } else {
      setExternal(value);
    }
    // Only a new path or value from the caller is news here (readOnly has its own effect).
  }, [path, value]);

  useEffect(() => {
    view.current?.dispatch({ effects: compartments.ro.reconfigure(readOnlyMode(readOnly)) });
  }, [readOnly, compartments]);

  const reload = () => {
    if (external === null) return;
    baseline.current = external;
    replaceDoc(external);
    setExternal(null);
    recomputeDirty();
  };

  const keepMine = () => {
    if (external === null) return;
    // Compare against the hand's new copy from now on: saving will overwrite it, knowingly.
    baseline.current = external;
    setExternal(null);
    recomputeDirty();
  };

  return (
    <div className="ce" data-testid="code-editor" data-dirty={dirty ? 'true' : 'false'} data-path={path}>
      <div className="ce-bar">
        <span className="ce-path mono" title={path}>
          {path}
        </span>
        {dirty && (
          <span className="ce-dot" title="Unsaved changes" aria-label="unsaved changes">
            ●
          </span>
        )}
        <span className="ce-spacer" />
        {readOnly && <span className="ce-badge">read-only</span>}
        {error && (
          <span className="ce-error small" role="alert" title={error}>
            Save failed: {error}
          </span>
        )}
        {!readOnly && (
          <button type="button" className="ce-save" data-testid="editor-save" disabled={!dirty || saving} onClick={() => void save()} title="Save (Ctrl/Cmd-S)">
            {saving ? 'Saving…' : 'Save'}
          </button>
        )}
      </div>
      {external !== null && (
        <div className="ce-notice" data-testid="editor-external-change" role="status">
          <span>Changed on the hand — reload?</span>
          <button type="button" onClick={reload} data-testid="editor-reload">
            Reload
          </button>
          <button type="button" onClick={keepMine} data-testid="editor-keep">
            Keep mine
          </button>
        </div>
      )}
      <div className="ce-host" ref={host} />
    </div>
  );
}
