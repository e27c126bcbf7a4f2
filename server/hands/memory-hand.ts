import 'server-only';
import type { z } from 'zod';
import { type ExecuteContext, type Hand, NEVER_LOST, type ToolSpec, ToolError } from '~/lib/hand';
import { BRAIN_TOOLS } from '~/lib/tools';
import { describeZodError } from '~/lib/events';
import { globToRegExp } from '~/lib/glob';
import type { Provisioner } from '~/server/hands/provisioner';
import { lineRange, replaceOnce } from '~/lib/text-edits';
import { FileToolInputs } from '~/lib/tool-inputs';
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

function parse<T>(schema: z.ZodType<T>, tool: string, input: unknown): T {
  const r = schema.safeParse(input);
  if (!r.success) throw new ToolError(`${tool}: invalid input: ${describeZodError(r.error)}`);
  return r.data;
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
        const { path, start_line, end_line } = parse(FileToolInputs.read, name, input);
        const text = this.files.get(normalise(path));
        if (text === undefined) throw new ToolError(`read: no such file: ${path}`);
        return lineRange(text, start_line, end_line);
      }
      case 'write': {
        const { path, content } = parse(FileToolInputs.write, name, input);
        this.files.set(normalise(path), content);
        return `wrote ${Buffer.byteLength(content)} bytes to ${normalise(path)}`;
      }
      case 'edit': {
        const { path, old_text, new_text } = parse(FileToolInputs.edit, name, input);
        const key = normalise(path);
        const text = this.files.get(key);
        if (text === undefined) throw new ToolError(`edit: no such file: ${path}`);
        this.files.set(key, replaceOnce(text, old_text, new_text, path));
        return `edited ${key}`;
      }
      case 'glob': {
        const { pattern } = parse(FileToolInputs.glob, name, input);
        const re = globToRegExp(pattern);
        const hits = [...this.files.keys()].filter((k) => re.test(k)).sort();
        return hits.length > 0 ? hits.join('\n') : `no files match ${pattern}`;
      }
      case 'grep': {
        const { pattern, path } = parse(FileToolInputs.grep, name, input);
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
