/**
 * A request body that counts what is read of it: `chunks` pieces of `size` bytes, each made only
 * when the reader asks (no read-ahead), so a test can tell how much of a body a handler took.
 */
export function countedBody(chunks: number, size = 64 * 1024, fill = 0x20): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= chunks) return controller.close();
        pulled++;
        controller.enqueue(new Uint8Array(size).fill(fill));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

/** A POST carrying `body`, with a Content-Length only when `length` is given (else chunked). */
export function postWith(url: string, headers: Record<string, string>, body: ReadableStream<Uint8Array>, length?: number): Request {
  const h = new Headers(headers);
  if (length !== undefined) h.set('content-length', String(length));
  return new Request(url, { method: 'POST', headers: h, body, duplex: 'half' } as RequestInit);
}
