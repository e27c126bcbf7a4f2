import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Markdown } from '~/app/_components/markdown/markdown';

const html = (text: string, partial = false) => renderToStaticMarkup(createElement(Markdown, { text, partial }));

describe('Markdown', () => {
  it('renders GFM as elements: bold, lists, tables, fenced code with its language', () => {
    const out = html('**bold** and `tick`\n\n- one\n- two\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n```ts\nconst x = 1;\n```');
    expect(out).toContain('<strong>bold</strong>');
    expect(out).toContain('<code>tick</code>');
    expect(out).toContain('<li>one</li>');
    expect(out).toContain('<td>1</td>');
    expect(out).toMatch(/<pre><code class="language-ts">const x = 1;\n<\/code><\/pre>/);
    expect(out).toContain('data-testid="copy-code"');
  });

  it('keeps HTML in a message as text, never as elements', () => {
    const out = html('hi <img src=x onerror=alert(1)> <script>alert(2)</script>\n\n<iframe src="https://example.com"></iframe>');
    expect(out).not.toMatch(/<img|<script|<iframe/);
    expect(out).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(out).toContain('&lt;script&gt;');
  });

  it('opens links away from the app without an opener, and leaves javascript: links unclickable', () => {
    const out = html('[docs](https://example.com/a) [bad](javascript:alert(1)) [worse](JAVASCRIPT:alert(1)) [data](data:text/html,x)');
    expect(out).toContain('<a href="https://example.com/a" target="_blank" rel="noopener noreferrer">docs</a>');
    expect(out).not.toMatch(/href="[^"]*(javascript|data):/i);
    expect(out).toContain('<span class="md-dead-link">bad</span>');
  });

  it('shows an image as a link, not fetched by the page', () => {
    const out = html('![a cat](https://example.com/cat.png)');
    expect(out).not.toContain('<img');
    expect(out).toContain('<a href="https://example.com/cat.png" target="_blank" rel="noopener noreferrer">image: a cat</a>');
  });

  it('renders a half-streamed answer without leaking its open markers', () => {
    expect(html('Some **bold text', true)).toContain('<p>Some <strong>bold text</strong></p>');
    expect(html('Run `npm te', true)).toContain('<p>Run <code>npm te</code></p>');
    expect(html('See [the do', true)).not.toContain('[');
    const fence = html('Here:\n\n```py\nprint(1)', true);
    expect(fence).toMatch(/<pre><code class="language-py">print\(1\)/);
  });
});
