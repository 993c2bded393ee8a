// A tool's header value given with spaces or tabs around it is sent trimmed (fetch trims header
// values), so an endpoint echoing it back shows the trimmed value: that is what is withheld, even
// when the value is short (docs/api-notes.md "HTTP tools": from 4 characters on).
import { inject, expect, it } from "vitest";
import { api, createConversation, newTenant, send, transcript } from "./helpers";

const server = inject("httpToolServer");

async function echoedThrough(
  key: string,
  { name, tag, headers }: { name: string; tag: string; headers: Record<string, string> },
) {
  const r = await api(
    "POST",
    "/v1/tools",
    {
      kind: "http",
      name,
      description: "Weather.",
      inputSchema: { type: "object", properties: { city: { type: "string" } } },
      endpoint: `${server}/echo?key=${tag}`,
      headers,
    },
    { key },
  );
  expect(r.status).toBe(201);
  const id = await createConversation(undefined, key);
  await send(id, `@tool tool_activate {"name":"${name}"}`, key);
  const call = await send(id, `@tool ${name} {"city":"Paris"}`, key);
  expect(call.status).toBe(200);
  const seen = (await (await fetch(`${server}/_seen?key=${tag}`)).json()) as { headers: Record<string, string> }[];
  return { stored: JSON.stringify(await transcript(id, key)), sent: seen.at(-1)!.headers };
}

it("withholds a short key given with spaces around it, as sent (trimmed)", async () => {
  const key = await newTenant();
  const { stored, sent } = await echoedThrough(key, {
    name: "weather_ws",
    tag: "cfws",
    headers: { "X-Api-Key": " k3y9Z " },
  });
  expect(sent["x-api-key"]).toBe("k3y9Z");
  expect(stored).toContain("[X-Api-Key withheld]");
  expect(stored).not.toContain("k3y9Z");
});

it("withholds a short bearer value given with tabs and spaces around it", async () => {
  const key = await newTenant();
  const { stored, sent } = await echoedThrough(key, {
    name: "weather_tab",
    tag: "cfwstab",
    headers: { Authorization: "\t Bearer abc1234 \t" },
  });
  expect(sent.authorization).toBe("Bearer abc1234");
  // The echoed header is withheld whole; the echo's "token" (the 7-character word alone) is shorter
  // than a word withheld on its own (MIN_SECRET_WORD), given with spaces or not.
  expect(stored).toContain('\\"authorization\\":\\"[Authorization withheld]\\"');
  expect(stored).not.toContain("Bearer abc1234");
});
