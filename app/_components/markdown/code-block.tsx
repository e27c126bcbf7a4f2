'use client';
import { type ComponentProps, useRef } from 'react';
import type { ExtraProps } from 'react-markdown';
import { CopyButton } from '~/app/_components/copy-button/copy-button';

/** The fence's language (`language-ts` on its `<code>`), as the model wrote it. */
function languageOf(node: ExtraProps['node']): string | null {
  const code = node?.children[0];
  if (code?.type !== 'element') return null;
  const classes = code.properties.className;
  const lang = Array.isArray(classes) ? classes.map(String).find((c) => c.startsWith('language-')) : undefined;
  return lang ? lang.slice('language-'.length) : null;
}

/** A fenced code block: scrolls sideways rather than widening the chat, with a copy button. */
export function CodeBlock({ node, children }: ComponentProps<'pre'> & ExtraProps) {
  const pre = useRef<HTMLPreElement>(null);
  const lang = languageOf(node);
  return (
    <div className="md-code" data-testid="code-block">
      <div className="md-code-bar">
        <span className="md-code-lang">{lang ?? 'text'}</span>
        {/* The DOM's text: the code as written, whatever highlighting wrapped it in; without the
            fence's final newline, so a command pasted into a shell does not run at once. */}
        <CopyButton text={() => (pre.current?.textContent ?? '').replace(/\n$/, '')} label="Copy code" testId="copy-code" />
      </div>
      <pre ref={pre}>{children}</pre>
    </div>
  );
}
