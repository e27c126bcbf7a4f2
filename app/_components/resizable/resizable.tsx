'use client';
import 'client-only';
import type { ReactNode } from 'react';
import { Group, Separator, useDefaultLayout } from 'react-resizable-panels';
import '~/app/_components/resizable/resizable.css';

export { Panel } from 'react-resizable-panels';

/**
 * A react-resizable-panels group whose sizes this browser remembers (localStorage, by `id`).
 * Client-only: the saved sizes are not known on the server, so render it after hydration.
 */
export function PersistedGroup({ id, orientation, className, children }: { id: string; orientation: 'horizontal' | 'vertical'; className?: string; children: ReactNode }) {
  const { defaultLayout, onLayoutChanged } = useDefaultLayout({ id: `paddock.${id}`, storage: localStorage });
  return (
    <Group id={id} orientation={orientation} className={className} defaultLayout={defaultLayout} onLayoutChanged={onLayoutChanged}>
      {children}
    </Group>
  );
}

/** The bar between two panes: drag it, or focus it and use the arrow keys; a double click resets. */
export function ResizeHandle({ id }: { id: string }) {
  return <Separator id={id} className="rz-handle" />;
}
