// Turns zod issues into one message that names the field, e.g. "settings.tailMessages: Too small".
import type { core } from "zod";

export function describeZodError(error: { issues: readonly core.$ZodIssue[] }, prefix = ""): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
      if (issue.code === "unrecognized_keys") {
        const keys = (issue as { keys: string[] }).keys.map((k) => [path, k].filter(Boolean).join("."));
        return `unknown field ${keys.join(", ")}`;
      }
      return `${path || "body"}: ${issueMessage(issue)}`;
    })
    .join("; ");
}

/** zod reports a missing union field as a bare "Invalid input"; say what was expected instead. */
function issueMessage(issue: core.$ZodIssue): string {
  if (issue.code === "invalid_union" && "errors" in issue && Array.isArray(issue.errors)) {
    const first = (issue.errors as core.$ZodIssue[][]).flat()[0];
    if (first) return first.message;
  }
  return issue.message;
}
