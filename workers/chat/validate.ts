// Request validation: zod through @hono/zod-validator, with errors that name the field.
import { zValidator } from "@hono/zod-validator";
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import { describeZodError } from "../../core/validation";
import { ApiError, badRequest } from "./errors";

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

/** Rejects a non-JSON body up front, so a wrong Content-Type is a 415, not a confusing "field required". */
const requireJson: MiddlewareHandler = async (c, next) => {
  const type = (c.req.header("content-type") ?? "").split(";")[0].trim();
  if (!JSON_TYPE.test(type)) throw new ApiError(415, "unsupported_media_type", "Content-Type must be application/json");
  await next();
};

export const jsonBody = <T extends z.ZodType>(schema: T) =>
  [
    requireJson,
    zValidator("json", schema, (result) => {
      if (!result.success) throw badRequest(describeZodError(result.error));
    }),
  ] as const;

export const query = <T extends z.ZodType>(schema: T) =>
  zValidator("query", schema, (result) => {
    if (!result.success) throw badRequest(describeZodError(result.error));
  });
