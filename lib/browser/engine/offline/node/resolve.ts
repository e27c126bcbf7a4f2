import 'client-only';
import { NODE_BUILTINS, UNSUPPORTED_BUILTINS } from '~/lib/browser/engine/offline/node/bootstrap';
import type { Vfs } from '~/lib/browser/engine/offline/node/vfs';
import { basenamePosix, dirnamePosix, joinPosix, resolvePosix } from '~/lib/posix-path';

/**
 * Node's module resolution over the run's file copy: relative and absolute paths, extensions,
 * directories (package.json "main", index files), node_modules lookup with "exports"
 * (conditions, subpaths, `*` patterns), and the module format of a file (.mjs/.cjs/.json,
 * package.json "type", else ES module syntax detection, as Node 22 does).
 */

export type ModuleFormat = 'cjs' | 'esm' | 'json';
export type Resolution = { builtin: string } | { path: string; format: ModuleFormat };

export class ResolveError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface PackageJson {
  main?: unknown;
  type?: unknown;
  exports?: unknown;
}

const BUILTINS: ReadonlySet<string> = new Set(NODE_BUILTINS);
const UNSUPPORTED: ReadonlySet<string> = new Set(UNSUPPORTED_BUILTINS);

/** `import`/`export` statements or `import.meta`: the file is an ES module. */
const ESM_SYNTAX =
  /(?:^|[\n;])[ \t]*(?:import\s*(?:[\w$*{]|["'])|import\.meta\b|export\s*(?:[{*]|default\b|const\b|let\b|var\b|function\b|async\b|class\b))/;

export function looksLikeEsm(source: string): boolean {
  return ESM_SYNTAX.test(source);
}

export class Resolver {
  private readonly packages = new Map<string, PackageJson | null>();

  constructor(private readonly vfs: Vfs) {}

  resolve(request: string, fromDir: string, mode: 'require' | 'import'): Resolution {
    const bare = request.startsWith('node:') ? request.slice(5) : request;
    if (BUILTINS.has(bare)) return { builtin: bare };
    if (UNSUPPORTED.has(bare)) {
      throw new ResolveError(
        'ERR_UNSUPPORTED_BUILTIN',
        `The offline engine has no '${bare}' module (no sockets, network or native code in the browser)`,
      );
    }
    if (request.startsWith('node:')) throw new ResolveError('ERR_UNKNOWN_BUILTIN_MODULE', `No such built-in module: ${request}`);
    const spec = request.startsWith('file://') ? decodeURIComponent(request.slice('file://'.length)) : request;
    const notFound = () => new ResolveError('MODULE_NOT_FOUND', `Cannot find module '${request}'`);

    if (spec.startsWith('/') || spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')) {
      const abs = resolvePosix(fromDir, spec);
      const hit = this.asFile(abs) ?? this.asDirectory(abs);
      if (hit === null) throw notFound();
      return this.found(hit);
    }

    const parts = spec.split('/');
    const nameLen = spec.startsWith('@') ? 2 : 1;
    const name = parts.slice(0, nameLen).join('/');
    const subpath = parts.length > nameLen ? `./${parts.slice(nameLen).join('/')}` : '.';
    for (let dir = fromDir; ; dir = dirnamePosix(dir)) {
      if (basenamePosix(dir) !== 'node_modules') {
        const pkgDir = joinPosix(joinPosix(dir, 'node_modules'), name);
        if (this.vfs.tryStat(pkgDir)?.kind === 'dir') {
          const pkg = this.packageAt(pkgDir);
          if (pkg?.exports !== undefined && pkg.exports !== null) {
            const target = resolveExports(pkg.exports, subpath, mode === 'import' ? ['import', 'node', 'default'] : ['require', 'node', 'default']);
            if (target === null) {
              throw new ResolveError('ERR_PACKAGE_PATH_NOT_EXPORTED', `Package subpath '${subpath}' is not defined by "exports" in ${pkgDir}/package.json`);
            }
            const abs = resolvePosix(pkgDir, target);
            if (this.isFile(abs)) return this.found(abs);
            throw notFound();
          }
          const abs = subpath === '.' ? pkgDir : resolvePosix(pkgDir, subpath);
          const hit = this.asFile(abs) ?? this.asDirectory(abs);
          if (hit !== null) return this.found(hit);
        }
      }
      if (dir === '/') break;
    }
    throw notFound();
  }

  /** The format Node would load `path` as. */
  format(path: string): ModuleFormat {
    if (path.endsWith('.mjs')) return 'esm';
    if (path.endsWith('.cjs')) return 'cjs';
    if (path.endsWith('.json')) return 'json';
    const type = this.packageType(dirnamePosix(path));
    if (type === 'module') return 'esm';
    if (type === 'commonjs') return 'cjs';
    try {
      return looksLikeEsm(new TextDecoder().decode(this.vfs.readFile(path))) ? 'esm' : 'cjs';
    } catch {
      return 'cjs';
    }
  }

  private found(path: string): Resolution {
    const real = this.vfs.real(path, true, 'open');
    return { path: real, format: this.format(real) };
  }

  private isFile(p: string): boolean {
    return this.vfs.tryStat(p)?.kind === 'file';
  }

  private asFile(abs: string): string | null {
    for (const candidate of [abs, `${abs}.js`, `${abs}.json`, `${abs}.cjs`, `${abs}.mjs`]) {
      if (this.isFile(candidate)) return candidate;
    }
    return null;
  }

  private asDirectory(abs: string): string | null {
    if (this.vfs.tryStat(abs)?.kind !== 'dir') return null;
    const main = this.packageAt(abs)?.main;
    if (typeof main === 'string' && main !== '') {
      const m = resolvePosix(abs, main);
      const hit = this.asFile(m) ?? this.index(m);
      if (hit !== null) return hit;
    }
    return this.index(abs);
  }

  private index(dir: string): string | null {
    for (const name of ['index.js', 'index.json', 'index.cjs']) {
      const p = joinPosix(dir, name);
      if (this.isFile(p)) return p;
    }
    return null;
  }

  private packageAt(dir: string): PackageJson | null {
    if (!this.packages.has(dir)) {
      let pkg: PackageJson | null = null;
      try {
        const parsed: unknown = JSON.parse(new TextDecoder().decode(this.vfs.readFile(joinPosix(dir, 'package.json'))));
        if (typeof parsed === 'object' && parsed !== null) pkg = parsed;
      } catch {
        pkg = null;
      }
      this.packages.set(dir, pkg);
    }
    return this.packages.get(dir) ?? null;
  }

  /** "type" of the nearest package.json above `dir`. */
  private packageType(dir: string): unknown {
    for (let d = dir; ; d = dirnamePosix(d)) {
      if (this.isFile(joinPosix(d, 'package.json'))) return this.packageAt(d)?.type;
      if (d === '/') return undefined;
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** package.json "exports" → the target path for `subpath` ('.' or './x'), or null. */
export function resolveExports(exports: unknown, subpath: string, conditions: readonly string[]): string | null {
  const map: Record<string, unknown> =
    isObject(exports) && Object.keys(exports).some((k) => k.startsWith('.')) ? exports : { '.': exports };
  if (subpath in map) return resolveTarget(map[subpath], conditions, '');
  let best: { key: string; match: string } | null = null;
  for (const key of Object.keys(map)) {
    const star = key.indexOf('*');
    if (star < 0) continue;
    const prefix = key.slice(0, star);
    const suffix = key.slice(star + 1);
    if (subpath.startsWith(prefix) && subpath.endsWith(suffix) && subpath.length >= key.length - 1) {
      if (best === null || prefix.length > best.key.indexOf('*')) {
        best = { key, match: subpath.slice(prefix.length, subpath.length - suffix.length) };
      }
    }
  }
  return best === null ? null : resolveTarget(map[best.key], conditions, best.match);
}

function resolveTarget(target: unknown, conditions: readonly string[], star: string): string | null {
  if (typeof target === 'string') return target.split('*').join(star);
  if (Array.isArray(target)) {
    for (const t of target) {
      const r = resolveTarget(t, conditions, star);
      if (r !== null) return r;
    }
    return null;
  }
  if (isObject(target)) {
    for (const [cond, value] of Object.entries(target)) {
      if (cond !== 'default' && !conditions.includes(cond)) continue;
      const r = resolveTarget(value, conditions, star);
      if (r !== null) return r;
    }
  }
  return null;
}

/** Named exports of a CommonJS module, found the way Node's cjs-module-lexer finds the common ones. */
export function cjsExportNames(source: string): string[] {
  const names = new Set<string>();
  for (const m of source.matchAll(/\b(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=[^=]/g)) names.add(m[1]!);
  for (const m of source.matchAll(/Object\.defineProperty\(\s*(?:module\.)?exports\s*,\s*["']([A-Za-z_$][\w$]*)["']/g)) names.add(m[1]!);
  const literal = /module\.exports\s*=\s*\{([^}]*)\}/.exec(source);
  if (literal) {
    for (const part of literal[1]!.split(',')) {
      const key = /^\s*([A-Za-z_$][\w$]*)\s*(?::|$)/.exec(part);
      if (key) names.add(key[1]!);
    }
  }
  names.delete('default');
  names.delete('__esModule');
  return [...names];
}
