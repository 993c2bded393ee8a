// `npm run openapi`: fetches /openapi.json from a throwaway local stack and writes it to
// client/openapi.gen.json with the typed client's types (client/api-types.gen.ts). A workers test fails
// while the committed copy differs from what the app serves.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, startStack } from "./stack.mjs";
import { typesFromDocument } from "./openapi-types.mjs";

const dir = mkdtempSync(join(tmpdir(), "context-chat-openapi-"));
const stack = await startStack({ persistTo: dir });
try {
  const res = await fetch(`${stack.baseUrl}/openapi.json`);
  if (!res.ok) throw new Error(`GET /openapi.json: ${res.status}`);
  const doc = await res.json();
  writeFileSync(join(ROOT, "client/openapi.gen.json"), `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(join(ROOT, "client/api-types.gen.ts"), typesFromDocument(doc));
  console.log(`client/openapi.gen.json and client/api-types.gen.ts: ${Object.keys(doc.paths).length} paths`);
} finally {
  await stack.stop();
  rmSync(dir, { recursive: true, force: true });
}
