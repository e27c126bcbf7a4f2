import 'client-only';
import { cjsExportNames, type Resolver, ResolveError } from '~/lib/browser/engine/offline/node/resolve';
import { dirnamePosix } from '~/lib/posix-path';

/** QuickJS's module name normalizer: a specifier resolved as Node's `import` would, from its importer. */
export function normalizeModule(resolver: Resolver, cwd: string, base: string, requested: string): string {
  const fromDir = base.startsWith('node:') ? cwd : dirnamePosix(base);
  try {
    const r = resolver.resolve(requested, fromDir, 'import');
    return 'builtin' in r ? `node:${r.builtin}` : r.path;
  } catch (e) {
    if (e instanceof ResolveError) throw new Error(`${e.message} imported from ${base}`, { cause: e });
    throw e;
  }
}

/** QuickJS's module loader: builtins and CommonJS files wrapped as ES modules with their named exports. */
export function moduleSource(name: string, resolver: Resolver, readText: (path: string) => string, builtinExportNames: (id: string) => string[]): string {
  if (name.startsWith('node:')) {
    const id = name.slice(5);
    const names = builtinExportNames(id);
    return `const m = globalThis.__node_internal__.builtin(${JSON.stringify(id)}); export default m;${names.length ? ` export const { ${names.join(', ')} } = m;` : ''}`;
  }
  const format = resolver.format(name);
  const text = readText(name);
  if (format === 'esm') return metaPrefix(name) + stripShebang(text);
  if (format === 'json') return `export default JSON.parse(${JSON.stringify(text)});`;
  const names = cjsExportNames(text);
  return (
    `const m = globalThis.__node_internal__.requireAbs(${JSON.stringify(name)}, 'cjs'); export default m;` +
    (names.length ? ` export const { ${names.join(', ')} } = m == null ? {} : m;` : '')
  );
}

export function stripShebang(source: string): string {
  return source.startsWith('#!') ? `//${source.slice(2)}` : source;
}

/** import.meta for an ES module, on the first line so line numbers stay right. */
export function metaPrefix(path: string): string {
  const dir = dirnamePosix(path);
  return (
    `import.meta.url = ${JSON.stringify(`file://${encodeURI(path)}`)}; import.meta.filename = ${JSON.stringify(path)}; ` +
    `import.meta.dirname = ${JSON.stringify(dir)}; import.meta.resolve = (s) => globalThis.__node_internal__.resolveUrl(s, ${JSON.stringify(dir)}); `
  );
}
