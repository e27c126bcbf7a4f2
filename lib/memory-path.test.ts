import { describe, expect, it } from 'vitest';
import { memoryPathProblem, rollUp } from '~/lib/memory-path';

describe('memory paths', () => {
  it('accepts absolute, NFC paths of plain segments', () => {
    for (const p of ['/a', '/notes/todo.md', '/Ünïcode/ok', `/${'s/'.repeat(19)}x`]) expect(memoryPathProblem(p), p).toBeNull();
  });

  it('refuses relative, dot-dot, NUL, control, non-NFC, empty-segment and too deep or long paths, saying why', () => {
    expect(memoryPathProblem('notes/a')).toMatch(/start with \//);
    expect(memoryPathProblem('/a/../etc/passwd')).toMatch(/\.\./);
    expect(memoryPathProblem('/a/./b')).toMatch(/\. or \.\./);
    expect(memoryPathProblem('/a\0b')).toMatch(/NUL/);
    expect(memoryPathProblem('/a\nb')).toMatch(/control/);
    expect(memoryPathProblem('/a\u2028b')).toMatch(/control or format/);
    expect(memoryPathProblem('/e\u0301')).toMatch(/Normalization/);
    expect(memoryPathProblem('/a//b')).toMatch(/empty segment/);
    expect(memoryPathProblem('/a/')).toMatch(/empty segment/);
    expect(memoryPathProblem('/')).toMatch(/empty segment/);
    expect(memoryPathProblem(`/${'s/'.repeat(20)}x`)).toMatch(/20 segments/);
    expect(memoryPathProblem(`/${'x'.repeat(1024)}`)).toMatch(/1024 bytes/);
  });

  it('rolls memories deeper than the depth up into prefixes measured from the prefix’s last slash', () => {
    const paths = ['/notes/a', '/notes/b/c', '/notes/b/d/e', '/nox/y'];
    expect(rollUp(paths, '/no', 1)).toEqual([
      { path: '/notes/', prefix: true },
      { path: '/nox/', prefix: true },
    ]);
    expect(rollUp(paths, '/notes/', 0).map((i) => i.path)).toEqual(['/notes/a', '/notes/b/c', '/notes/b/d/e']);
    expect(rollUp(paths, '/notes/', 2)).toEqual([
      { path: '/notes/a', prefix: false },
      { path: '/notes/b/c', prefix: false },
      { path: '/notes/b/d/', prefix: true },
    ]);
  });
});
