// What an MCP server sends is counted as it arrives, as an HTTP tool's answer is: one message (a
// JSON body, or one event of an event stream, whose connection may carry many) is read up to the
// cap and no further. The SDK buffers a whole answer before it looks at it, so without this one
// huge result would sit whole in the conversation object's memory.

export class McpMessageTooLarge extends Error {
  constructor(readonly limit: number) {
    super(
      `a message from the server passed ${limit} bytes (the most one MCP message may carry); nothing past that was read`,
    );
  }
}

/** A counter fed each chunk in turn: false once the current message has passed `limit` bytes. */
type Counter = (chunk: Uint8Array) => boolean;

function bodyCounter(limit: number): Counter {
  let size = 0;
  return (chunk) => (size += chunk.byteLength) <= limit;
}

/**
 * Bytes of the current event: a blank line (two line ends in a row, each CRLF, LF or CR) ends it
 * and the count starts again, so a long-lived stream may carry any number of messages.
 */
function eventCounter(limit: number): Counter {
  let size = 0;
  let lineEmpty = true;
  let afterCR = false;
  return (chunk) => {
    for (const byte of chunk) {
      size++;
      if (byte === 0x0a && afterCR) {
        afterCR = false;
        continue;
      }
      afterCR = byte === 0x0d;
      if (byte === 0x0a || byte === 0x0d) {
        if (lineEmpty) size = 0;
        lineEmpty = true;
      } else {
        lineEmpty = false;
        if (size > limit) return false;
      }
    }
    return true;
  };
}

/**
 * `res` with its body counted: past `limit` bytes in one message the body errors, the rest is
 * never read (the connection is cancelled), and `onOver` hears it first (the SDK may swallow a
 * stream's error and wait for an answer that will not come). A body declared larger than the
 * limit is refused before a byte of it is read.
 */
export function capMessages(res: Response, limit: number, onOver: (err: McpMessageTooLarge) => void): Response {
  // A status that may not carry a body cannot be rebuilt with one (and has nothing to count).
  if (!res.body || [101, 204, 205, 304].includes(res.status)) return res;
  const eventStream = /^\s*text\/event-stream/i.test(res.headers.get("content-type") ?? "");
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (!eventStream && Number.isFinite(declared) && declared > limit) {
    const err = new McpMessageTooLarge(limit);
    onOver(err);
    void res.body.cancel(err).catch(() => undefined);
    throw err;
  }
  const fits = eventStream ? eventCounter(limit) : bodyCounter(limit);
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      if (fits(value)) return controller.enqueue(value);
      const err = new McpMessageTooLarge(limit);
      onOver(err);
      controller.error(err);
      await reader.cancel(err).catch(() => undefined);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
