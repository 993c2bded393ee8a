// A download names its file in `filename*` (RFC 8187): every character outside the header's
// attr-char set is percent-encoded, the apostrophe (its own delimiter) and `()*` included, so a
// client reads the name as uploaded and nothing after a quote is cut off or misread.
import { describe, expect, it } from "vitest";
import { upload } from "./attachment-helpers";
import { createConversation, newTenant, worker } from "./helpers";

/** The name a client decodes from `filename*=UTF-8''<value>`: the value must hold only attr-char or %XX. */
function decodedName(disposition: string): string {
  const match = /^attachment; filename\*=UTF-8''([A-Za-z0-9!#$&+\-.^_`|~%]+)$/.exec(disposition);
  if (!match) throw new Error(`not an RFC 8187 filename*: ${disposition}`);
  return decodeURIComponent(match[1]);
}

describe("an attachment's download", () => {
  it("names the file with every character outside attr-char percent-encoded, the apostrophe and ()* included", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const name = "Pat's notes (draft)*! — été.txt";
    const up = await upload(id, name, new TextEncoder().encode("hello\n"), "text/plain", key);
    expect(up.status).toBe(201);
    const down = await worker().fetch(
      new Request(`http://chat.test/v1/conversations/${id}/attachments/${up.json.id}/content`, {
        headers: { authorization: `Bearer ${key}` },
      }),
    );
    expect(down.status).toBe(200);
    const disposition = down.headers.get("content-disposition") ?? "";
    expect(disposition).toContain("Pat%27s%20notes%20%28draft%29%2A!");
    expect(decodedName(disposition)).toBe(name);
  });
});
