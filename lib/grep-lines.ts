import { ToolError } from '~/lib/hand';

/** Longest line a grep match shows; longer ones are cut with an ellipsis. */
const GREP_LINE_CHARS = 500;

/**
 * grep's result text over files read one by one, the same wherever a hand runs (paddock-hand on
 * a disk, the browser's offline engine): `path:line: text`, capped with a notice.
 */
export async function grepFiles(
  files: readonly string[],
  read: (rel: string) => Promise<string | null>,
  re: RegExp,
  pattern: string,
  cap: number,
): Promise<string> {
  const out: string[] = [];
  for (const rel of files) {
    const text = await read(rel);
    if (text === null) continue;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (!re.test(line)) continue;
      if (out.length === cap) return `${out.join('\n')}\n[grep: stopped after ${cap} matches; narrow the pattern or path]`;
      out.push(`${rel}:${i + 1}: ${line.length > GREP_LINE_CHARS ? `${line.slice(0, GREP_LINE_CHARS)}…` : line}`);
    }
  }
  return out.length > 0 ? out.join('\n') : `no matches for ${pattern}`;
}

/** grep's pattern as a RegExp; an invalid one is a ToolError the model can act on. */
export function grepRegExp(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (e) {
    throw new ToolError(`grep: invalid pattern: ${(e as Error).message}`);
  }
}
