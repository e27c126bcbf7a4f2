'use client';
import { type Ref, useState } from 'react';
import { StickToBottom, type StickToBottomContext } from 'use-stick-to-bottom';
import type { Item } from '~/app/_components/session-view/derive';
import { ItemView, StreamingView } from '~/app/_components/session-view/item-view';
import { ExamplePrompts } from '~/app/_components/session-view/example-prompts';
import { useReadOnly } from '~/app/_components/session-view/read-only';
import type { Streaming } from '~/app/_components/session-view/use-session-log';
import { FollowPaneResize, JumpToLatest } from '~/app/_components/session-view/follow-bottom';
import '~/app/_components/session-view/conversation.css';

/** Items rendered at first; older ones load on demand (a long session paints instantly). */
const WINDOW = 80;


/**
 * The chat. It follows new output (use-stick-to-bottom: a resize observer on the content, with
 * a spring) while the reader is at the bottom, and stays put once they scroll up.
 */
export function Conversation({
  sessionId,
  items,
  streaming,
  followRef,
}: {
  sessionId: string;
  items: Item[];
  streaming: Streaming;
  /** For the page: sending a message brings the reader back to the bottom. */
  followRef?: Ref<StickToBottomContext>;
}) {
  const [all, setAll] = useState(false);
  const shown = all || items.length <= WINDOW ? items : items.slice(-WINDOW);
  // Queued messages (last in `items`) wait below the answer being written.
  const split = shown.findIndex((i) => i.kind === 'user' && i.queued);
  const [said, queued] = split === -1 ? [shown, []] : [shown.slice(0, split), shown.slice(split)];
  const readOnly = useReadOnly();
  const view = (item: Item) => <ItemView key={item.kind === 'tool' || item.kind === 'custom' ? item.call.use.id : item.kind === 'evaluation' ? item.start.id : item.event.id} sessionId={sessionId} item={item} last={item === items.at(-1)} />;
  return (
    <StickToBottom className="conversation-frame" initial="instant" resize="smooth" contextRef={followRef}>
      <StickToBottom.Content className="conversation" scrollClassName="conversation-scroll" data-testid="conversation">
        {shown.length < items.length && (
          <button type="button" className="small more" onClick={() => setAll(true)}>
            show {items.length - shown.length} earlier messages
          </button>
        )}
        {items.length === 0 && Object.keys(streaming).length === 0 && (readOnly ? <p className="muted" data-testid="share-empty">Nothing said yet: the conversation appears here as it happens.</p> : <ExamplePrompts sessionId={sessionId} />)}
        {said.map(view)}
        {Object.entries(streaming).map(([startId, s]) => (
          <StreamingView key={startId} text={s.text} thinking={s.thinking} tools={s.tools} />
        ))}
        {queued.map(view)}
      </StickToBottom.Content>
      <JumpToLatest label="Jump to latest ↓" testId="jump-latest" />
      <FollowPaneResize />
    </StickToBottom>
  );
}
