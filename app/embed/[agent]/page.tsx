import { isStoreUnavailable } from '~/lib/errors';
import { normalizeOrigin, widgetAllows } from '~/lib/widget';
import { WidgetApp } from '~/app/_components/widget/widget-app';
import '~/app/_components/widget/widget.css';
import { getRuntime } from '~/server/runtime';

/**
 * An agent's docs widget, framed by a page of `origin` (the loader passes its own origin; the
 * frame-ancestors CSP set by proxy.ts names that origin only, so a site that lies about where it is
 * gets no frame). Unless the agent's widget is on for that origin, the page shows nothing of it.
 */
export default async function EmbedPage({ params, searchParams }: { params: Promise<{ agent: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { agent } = await params;
  const query = await searchParams;
  const origin = typeof query.origin === 'string' ? normalizeOrigin(query.origin) : null;
  const theme = query.theme === 'dark' ? 'dark' : 'light';
  let allowed = false;
  if (origin !== null && /^agent_[A-Za-z0-9]{1,64}$/.test(agent)) {
    try {
      allowed = widgetAllows(await (await getRuntime()).access.widgets.store.settings(agent), origin);
    } catch (e) {
      if (!isStoreUnavailable(e)) throw e;
      return <Unavailable theme={theme} text="The assistant is unavailable right now. Try again in a moment." />;
    }
  }
  if (!allowed || origin === null) return <Unavailable theme={theme} text="This assistant is not available on this site." />;
  return <WidgetApp agentId={agent} origin={origin} theme={theme} />;
}

function Unavailable({ theme, text }: { theme: 'light' | 'dark'; text: string }) {
  return (
    <main className={`pw pw-${theme}`} data-testid="widget-unavailable">
      <p className="pw-note">{text}</p>
    </main>
  );
}
