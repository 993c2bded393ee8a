// `inference_geo` on the offline model, as https://platform.claude.com/docs/en/build-with-claude/data-residency
// describes it: taken on Claude Opus 4.6 and later models ("global" or "us"), a 400 on the models
// released before (the 4.5 generation); and the answer's usage says where inference ran, in the JSON
// answer and in the stream's message_start (which the SDK keeps in its final message).
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { HELLO, postOnFixtureDay } from "./offline-model-client";
import { catalogEntry } from "../../core/models/lookup";

beforeEach(() => resetOfflineCache());

/** The first request loads the tokenizer table: seconds on a loaded machine. */
const SLOW = 30_000;

const send = (body: Record<string, unknown>): Promise<Response> => postOnFixtureDay({ ...HELLO, ...body });

async function errorOf(body: Record<string, unknown>): Promise<{ status: number; type: string; message: string }> {
  const response = await send(body);
  const json = (await response.json()) as { error: { type: string; message: string } };
  return { status: response.status, ...json.error };
}

async function usageOf(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await send(body);
  expect(response.status).toBe(200);
  return ((await response.json()) as { usage: Record<string, unknown> }).usage;
}

/** The usage of a streamed answer's message_start. */
async function streamedUsageOf(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await send({ ...body, stream: true });
  expect(response.status).toBe(200);
  const frames = (await response.text()).split("\n\n").filter(Boolean);
  const start = frames.find((f) => f.startsWith("event: message_start"));
  expect(start).toBeDefined();
  const data = JSON.parse(start!.slice(start!.indexOf("data: ") + 6)) as {
    message: { usage: Record<string, unknown> };
  };
  return data.message.usage;
}

describe("the catalog says which models take inference_geo", () => {
  it("Opus 4.6, Sonnet 4.6 and later take it; the 4.5 generation does not", () => {
    for (const id of [
      "claude-opus-4-6",
      "claude-sonnet-4-6",
      "claude-opus-4-8",
      "claude-sonnet-5-5",
      "claude-opus-5-5",
    ])
      expect(catalogEntry(id)?.inferenceGeo, id).toBe(true);
    for (const id of ["claude-haiku-4-5", "claude-opus-4-5"]) expect(catalogEntry(id)?.inferenceGeo, id).toBe(false);
  });
});

describe("inference_geo on the offline model", () => {
  it(
    "is a 400 on a model released before Opus 4.6, at any value; null is taken",
    async () => {
      for (const model of ["claude-haiku-4-5", "claude-opus-4-5", "claude-opus-4-5-20251101"]) {
        for (const geo of ["us", "global"]) {
          const error = await errorOf({ model, inference_geo: geo });
          expect(error.status, `${model} ${geo}`).toBe(400);
          expect(error.type).toBe("invalid_request_error");
          expect(error.message).toContain("inference_geo");
        }
        expect((await send({ model, inference_geo: null })).status, model).toBe(200);
      }
    },
    SLOW,
  );

  it(
    "takes the documented values on Opus 4.6 and later and refuses others",
    async () => {
      for (const model of ["claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-5-5", "offline-64k"])
        for (const geo of ["us", "global"]) expect((await send({ model, inference_geo: geo })).status).toBe(200);
      const unlisted = await errorOf({ inference_geo: "eu" });
      expect(unlisted.status).toBe(400);
      expect(unlisted.message).toBe("inference_geo: Input should be 'global' or 'us'");
      const typed = await errorOf({ inference_geo: 1 });
      expect(typed.status).toBe(400);
      expect(typed.message).toBe("inference_geo: Input should be a valid string");
    },
    SLOW,
  );

  it(
    "reports where inference ran in the JSON answer's usage",
    async () => {
      expect((await usageOf({ inference_geo: "us" })).inference_geo).toBe("us");
      expect((await usageOf({ inference_geo: "global" })).inference_geo).toBe("global");
      // Not asked for: the documented default.
      expect((await usageOf({})).inference_geo).toBe("global");
      expect((await usageOf({ inference_geo: null })).inference_geo).toBe("global");
      // A model without the parameter reports none as chosen.
      expect((await usageOf({ model: "claude-haiku-4-5" })).inference_geo).toBe("not_available");
    },
    SLOW,
  );

  it(
    "reports it in the stream's message_start",
    async () => {
      expect((await streamedUsageOf({ inference_geo: "us" })).inference_geo).toBe("us");
      expect((await streamedUsageOf({})).inference_geo).toBe("global");
      expect((await streamedUsageOf({ model: "claude-opus-4-5" })).inference_geo).toBe("not_available");
    },
    SLOW,
  );
});
