import 'server-only';
import { type ExecuteContext, type Hand, NEVER_LOST, type ToolSpec, ToolError } from '~/lib/hand';
import { BRAIN_TOOLS } from '~/lib/tools';
import { globToRegExp } from '~/lib/glob';
import type { Provisioner } from '~/server/hands/provisioner';
import { checkViewRange, editedText, lineRange, replaceText } from '~/lib/text-edits';
import { parseToolInput } from '~/lib/tool-inputs';
import { grepRegExp } from '~/lib/grep-lines';

/**
 * An in-process hand over an in-memory file tree. It has no shell: it exists so a session can
 * work (and tests can run) before any real hand is provisioned. It holds no credentials and
 * can reach nothing outside its own map.
 */

function normalise(p: string): string {
  const parts: string[] = [];
  for (const seg of p.replace(/^\.?\//, '').split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (parts.length === 0) throw new ToolError(`path ${p} is outside the workspace`);
      parts.pop();
      continue;
    }
    parts.push(seg);
  }
  if (parts.length === 0) throw new ToolError(`path ${p} names the workspace root, not a file`);
  return parts.join('/');
}

/** A folder to search under: `''` is the workspace itself; `..` out of it is refused. */
function normaliseDir(p: string): string {
  if (p.split('/').every((seg) => seg === '' || seg === '.')) return '';
  return normalise(p);
}

export class MemoryHand implements Hand {
  readonly kind = 'memory' as const;
  readonly lost = NEVER_LOST;
  private readonly files = new Map<string, string>();

  constructor(readonly id: string) {}

  tools(): Promise<ToolSpec[]> {
    return Promise.resolve(BRAIN_TOOLS.filter((t) => t.name !== 'bash'));
  }

  execute(name: string, input: unknown, _ctx?: ExecuteContext): Promise<string> {
    try {
      return Promise.resolve(this.run(name, input));
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  private run(name: string, input: unknown): string {
    switch (name) {
      case 'read': {
        const { file_path, view_range } = parseToolInput('read', input);
        checkViewRange(view_range);
        const text = this.files.get(normalise(file_path));
        if (text === undefined) throw new ToolError(`read: no such file: ${file_path}`);
        return lineRange(text, view_range);
      }
      case 'write': {
        const { file_path, content } = parseToolInput('write', input);
        this.files.set(normalise(file_path), content);
        return `wrote ${Buffer.byteLength(content)} bytes to ${normalise(file_path)}`;
      }
      case 'edit': {
        const { file_path, old_string, new_string, replace_all } = parseToolInput('edit', input);
        const key = normalise(file_path);
        const text = this.files.get(key);
        if (text === undefined) throw new ToolError(`edit: no such file: ${file_path}`);
        const edited = replaceText(text, old_string, new_string, file_path, replace_all);
        this.files.set(key, edited.text);
        return editedText(key, edited.count);
      }
      case 'glob': {
        const { pattern, path } = parseToolInput('glob', input);
        const scope = path === undefined ? '' : normaliseDir(path);
        // The pattern is matched below `path`, as on every other hand; hits are workspace-relative.
        const re = globToRegExp(pattern.replace(/^\.\//, ''));
        const hits = [...this.files.keys()]
          .filter((k) => scope === '' || k.startsWith(`${scope}/`))
          .filter((k) => re.test(scope === '' ? k : k.slice(scope.length + 1)))
          .sort();
        return hits.length > 0 ? hits.join('\n') : `no files match ${pattern}`;
      }
      case 'grep': {
        const { pattern, path } = parseToolInput('grep', input);
        const re = grepRegExp(pattern);
        const scope = path ? normalise(path) : '';
        const out: string[] = [];
        for (const [file, text] of [...this.files.entries()].sort(([a], [b]) => a.localeCompare(b))) {
          if (scope && file !== scope && !file.startsWith(`${scope}/`)) continue;
          text.split('\n').forEach((line, i) => {
            if (re.test(line)) out.push(`${file}:${i + 1}: ${line}`);
          });
        }
        return out.length > 0 ? out.join('\n') : `no matches for ${pattern}`;
      }
      case 'bash':
        throw new ToolError(`bash: hand ${this.id} is an in-memory hand without a shell`);
      default:
        throw new ToolError(`unknown tool ${name}`);
    }
  }

  close(): Promise<void> {
    this.files.clear();
    return Promise.resolve();
  }
}

/** In-process hands: for tests and for the demo brain when nothing else is configured. */
export function createMemoryProvisioner(): Provisioner {
  return {
    provision: (handId) => Promise.resolve(new MemoryHand(handId)),
  };
}
