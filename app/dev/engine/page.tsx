import { EnginePlayground } from '~/app/_components/engine-playground';

/**
 * A bare page for exercising the browser hand's engines (e2e/engine.spec.ts):
 * `?engine=offline|auto`, `?boot=MS` (WebContainer boot timeout), `?coi=ignore` (attempt the
 * boot on this non-isolated page), `?session=ID`, `?limit=MS` (node's time limit).
 */
export default async function EnginePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const q = await searchParams;
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const num = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : undefined);
  return (
    <main className="page">
      <EnginePlayground
        prefer={one(q.engine) === 'offline' ? 'offline' : 'auto'}
        sessionId={one(q.session) ?? 'dev-engine'}
        bootTimeoutMs={num(one(q.boot))}
        ignoreIsolation={one(q.coi) === 'ignore'}
        nodeTimeLimitMs={num(one(q.limit))}
      />
    </main>
  );
}
