import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The house's import rules that no lint block states: no import circle anywhere (type imports
 * count: a circle of types is still a knot for whoever reads it), and the layers inside server/
 * point down. Imports are read as text (`~/…` specifiers), resolved to files, and the graph's
 * strongly connected components found (Tarjan).
 */
const root = path.resolve(import.meta.dirname, '..');
const FOLDERS = ['lib', 'server', 'app', 'bench', 'e2e', 'scripts', 'hand'];
const EXTENSIONS = ['.ts', '.tsx', '/index.ts', '/index.tsx'];

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' ? [] : sourceFiles(p);
    return /\.tsx?$/.test(d.name) ? [p] : [];
  });
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'~\/([^']+)'/g)) {
    const base = path.join(root, m[1]!);
    const target = [base, ...EXTENSIONS.map((e) => base + e)].find((p) => fs.existsSync(p) && fs.statSync(p).isFile());
    if (target) out.push(path.relative(root, target));
  }
  return out;
}

/** The `~/…` files a file imports values from (`import type …` statements left out). */
function valueImportsOf(text: string): string[] {
  return [...text.matchAll(/^(?:import|export)(?!\s+type\s)[^;]*?from\s*'~\/([^']+)'/gms)].flatMap((m) => {
    const base = path.join(root, m[1]!);
    const target = [base, ...EXTENSIONS.map((e) => base + e)].find((p) => fs.existsSync(p) && fs.statSync(p).isFile());
    return target ? [path.relative(root, target)] : [];
  });
}

/** The floors of ARCHITECTURE.md inside server/, bottom first: a file may take values only from its floor or below. */
const FLOORS: RegExp[] = [
  /^server\/(log|config|ticker|data-dir[^/]*)\.ts$|^server\/metrics\//,
  /^server\/(session|files)\//,
  /^server\/net\//,
  /^server\/vault\//,
  /^server\/hands\//,
  /^server\/proxy\//,
  /^server\/harness\//,
  /^server\/(agents|widgets|access)\//,
  /^server\/commands\//,
  /^server\/(api|rest)\//,
  /^server\/runtime\.ts$/,
];
const floorOf = (file: string) => FLOORS.findIndex((re) => re.test(file));

function upwardValueImports(files: string[], read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8')): string[] {
  const wrong: string[] = [];
  for (const file of files) {
    const from = floorOf(file);
    if (from < 0 || file.endsWith('.test.ts') || file.includes('/testing/')) continue;
    for (const d of valueImportsOf(read(file))) if (floorOf(d) > from) wrong.push(`${file} → ${d}`);
  }
  return wrong;
}

function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const f of FOLDERS.flatMap((d) => sourceFiles(path.join(root, d)))) g.set(path.relative(root, f), importsOf(f));
  return g;
}

/** Components of more than one file, or a file importing itself. */
function circles(g: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1 || (g.get(v) ?? []).includes(v)) found.push(c.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return found;
}

describe('the import graph', () => {
  it('has no import circle', () => {
    expect(circles(graph())).toEqual([]);
  });

  it('finds a circle when there is one (the check is not vacuous)', () => {
    expect(circles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c']]);
  });

  it('keeps lib/ the bottom floor and the edges on top: lib imports no server or app code, and nothing below the edges imports them', () => {
    const g = graph();
    const wrong: string[] = [];
    for (const [file, deps] of g) {
      if (file.endsWith('.test.ts') || file.includes('/testing/')) continue;
      for (const d of deps) {
        // The one exception: the browser's tRPC client takes the router's type (T3's pattern; no code crosses).
        const routerType = file === 'lib/browser/trpc.ts' && d === 'server/api/root.ts';
        if (file.startsWith('lib/') && (d.startsWith('server/') || d.startsWith('app/')) && !routerType) wrong.push(`${file} → ${d}`);
        const edge = /^server\/(rest|api)\//.test(d);
        const below = /^server\/(session|hands|harness|vault|proxy|agents|widgets|commands|net|metrics)\//.test(file);
        if (edge && below) wrong.push(`${file} → ${d}`);
        if (below && d === 'server/runtime.ts') wrong.push(`${file} → ${d}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('has no value import from a higher floor inside server/ (a type a lower floor needs lives there)', () => {
    const files = sourceFiles(path.join(root, 'server')).map((f) => path.relative(root, f));
    expect(files.length).toBeGreaterThan(100);
    expect(upwardValueImports(files)).toEqual([]);
  });

  it('sees an upward value import, and lets a type import through', () => {
    const file = 'server/session/up.ts';
    const up = "import { getRuntime } from '~/server/runtime';\nimport type { Runtime } from '~/server/runtime';\n";
    expect(upwardValueImports([file], () => up)).toEqual([`${file} → server/runtime.ts`]);
    expect(upwardValueImports([file], () => "import type { Runtime } from '~/server/runtime';\n")).toEqual([]);
  });
});
