import { memo } from 'react';
import ReactMarkdown, { type Components, type Options } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import remend from 'remend';
import { CodeBlock } from '~/app/_components/markdown/code-block';
import { useHighlighter } from '~/app/_components/markdown/use-highlighter';
import '~/app/_components/markdown/markdown.css';

const REMARK: Options['remarkPlugins'] = [remarkGfm];

/**
 * Safety lies in what is left out: no rehype-raw, so HTML in a message stays text
 * (react-markdown's default), and react-markdown's URL filter empties `javascript:` and other
 * unsafe links, which then render as plain text.
 */
const COMPONENTS: Components = {
  a: ({ href, children }) =>
    href ? (
      <a href={href} target="_blank" rel="noopener noreferrer">
        {children}
      </a>
    ) : (
      <span className="md-dead-link">{children}</span>
    ),
  // An image the model names is a link, never fetched on its own: a URL the page loads unasked
  // can carry data out (and the session page's COEP would block most anyway).
  img: ({ src, alt }) =>
    typeof src === 'string' && src ? (
      <a href={src} target="_blank" rel="noopener noreferrer">
        {`image: ${alt || src}`}
      </a>
    ) : (
      <span className="md-dead-link">{alt}</span>
    ),
  pre: CodeBlock,
  table: ({ children }) => (
    <div className="md-table">
      <table>{children}</table>
    </div>
  ),
};

const FENCE = /^ {0,3}(`{3,}|~{3,})/m;

/**
 * A message's markdown (GFM) as elements. `partial` text (still streaming, or a collapsed head)
 * is healed first by remend, so a half-written `**bold` or link renders as it will end up.
 */
export const Markdown = memo(function Markdown({ text, partial = false, testId }: { text: string; partial?: boolean; testId?: string }) {
  const rehype = useHighlighter(FENCE.test(text));
  return (
    <div className="md" data-testid={testId}>
      <ReactMarkdown remarkPlugins={REMARK} rehypePlugins={rehype} components={COMPONENTS}>
        {partial ? remend(text, { katex: false, linkMode: 'text-only' }) : text}
      </ReactMarkdown>
    </div>
  );
});
