// Server-sent events from a response body, as parsed JSON `data` (one per event). Lines end with
// CRLF, LF or a lone CR (as the SSE spec allows), also when the two characters of a CRLF arrive in
// different chunks. Leaving the iteration early cancels the body, so the HTTP stream stops; so does
// `signal` at once, even while a read waits (the iteration then ends as if the body had).
export async function* sseData(
  body: ReadableStream<Uint8Array>,
  opts: { signal?: AbortSignal } = {},
): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel(opts.signal?.reason).catch(() => {});
  if (opts.signal?.aborted) cancel();
  else opts.signal?.addEventListener("abort", cancel, { once: true });
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let done = false;
  try {
    for (;;) {
      const read = await reader.read();
      done = read.done;
      buffer += decoder.decode(read.value ?? new Uint8Array(), { stream: !done });
      // A trailing \r may be the first half of a CRLF whose \n comes in the next chunk: held back.
      const held = !done && buffer.endsWith("\r") ? "\r" : "";
      const lines = (held ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
      // The last piece has no line ending yet (an unfinished event at the end is dropped, as the spec says).
      buffer = (lines.pop() ?? "") + held;
      for (const line of lines) {
        if (line === "") {
          const joined = data.join("\n");
          if (joined) yield JSON.parse(joined);
          data = [];
        } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (done) return;
    }
  } finally {
    opts.signal?.removeEventListener("abort", cancel);
    if (done) reader.releaseLock();
    else await reader.cancel().catch(() => {});
  }
}
