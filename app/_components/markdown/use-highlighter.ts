import 'client-only';
import { useEffect, useState } from 'react';
import type { Options } from 'react-markdown';

type Plugins = NonNullable<Options['rehypePlugins']>;

const NONE: Plugins = [];
// highlight.js's common languages weigh more than the rest of the chat together: they load on
// the first code block, once per page, and code shows plain until then.
let loaded: Plugins | null = null;
let loading: Promise<Plugins> | null = null;

function load(): Promise<Plugins> {
  loading ??= import('rehype-highlight').then(
    (m) => (loaded = [m.default]),
    (err: unknown) => {
      // Offline with the chunk not cached: stay plain, try again on the next code block.
      loading = null;
      throw err;
    },
  );
  return loading;
}

/** The rehype plugins that highlight fenced code, once loaded; none while `wanted` is false. */
export function useHighlighter(wanted: boolean): Plugins {
  const [plugins, setPlugins] = useState(loaded);
  useEffect(() => {
    if (!wanted || plugins) return;
    let live = true;
    load().then(
      (p) => live && setPlugins(p),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [wanted, plugins]);
  return (wanted && plugins) || NONE;
}
