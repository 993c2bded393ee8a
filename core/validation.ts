// Turns zod issues into one message that names the field, e.g. "settings.tailMessages: Too small".
import { type core, z } from "zod";

export function describeZodError(error: { issues: readonly core.$ZodIssue[] }, prefix = ""): string {
  return error.issues
    .flatMap(takenBranch)
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

/** A branch's issue that says only "not my type": the input is not the kind of value the branch takes. */
const wrongType = (issue: core.$ZodIssue): boolean =>
  issue.path.length === 0 && (issue.code === "invalid_type" || issue.code === "invalid_value");

/** A branch's issue that its `type` field holds another literal: the branch is for another kind. */
const otherKind = (issues: readonly core.$ZodIssue[]) =>
  issues.find(
    (i): i is core.$ZodIssueInvalidValue => i.code === "invalid_value" && i.path.length === 1 && i.path[0] === "type",
  );

/**
 * A union's own issue is a bare "Invalid input" holding every branch's issues, and the first
 * branch's first issue is usually "expected string" when the input was an array of bad blocks.
 * The branch that took the input's type (the one whose issues are not all "wrong type") is what
 * the client meant: its issues are reported instead, at their full paths, nested unions likewise.
 * Of two object branches that both took it, the one with fewer issues is the nearer (the first on a tie).
 */
function takenBranch(issue: core.$ZodIssue): core.$ZodIssue[] {
  if (issue.code !== "invalid_union") return [issue];
  const objects = issue.errors.filter((issues) => issues.length > 0 && !issues.every(wrongType));
  // An object branch whose `type` literal names another kind did not take the input either (a plain
  // union of such branches is a discriminated one in all but name): when none took it, every kind
  // the branches take is named, not the nearest branch's fields.
  const taken = objects.filter((issues) => !otherKind(issues));
  if (!taken.length && objects.length) {
    const kinds = objects.map(otherKind).filter((i) => i !== undefined);
    const values = kinds.flatMap((k) => k.values);
    if (kinds.length === objects.length && kinds[0])
      return [{ ...kinds[0], path: [...issue.path, "type"], values, message: `must be one of ${values.join(", ")}` }];
  }
  const branch = (taken.length ? taken : objects).reduce<core.$ZodIssue[] | undefined>(
    (best, b) => (best && best.length <= b.length ? best : b),
    undefined,
  );
  if (!branch) return [issue];
  return branch.flatMap((inner) => takenBranch({ ...inner, path: [...issue.path, ...inner.path] }));
}

const DEFAULT_TYPE_MESSAGE = /^Invalid input: expected .+, received (\w+)$/;

function issueMessage(issue: core.$ZodIssue): string {
  // zod words a missing field as "expected string, received undefined".
  if (issue.code === "invalid_type" && DEFAULT_TYPE_MESSAGE.exec(issue.message)?.[1] === "undefined") return "required";
  if (issue.code !== "invalid_union") return issue.message;
  // A discriminated union whose discriminator (`type`) is missing or matches no branch.
  if ("options" in issue && issue.options?.length) return `must be one of ${issue.options.map(String).join(", ")}`;
  // No branch took the input's type: name every type a branch takes.
  const branches = issue.errors.map((issues) => issues[0]).filter((first) => first !== undefined);
  const expected = [
    ...new Set(
      branches.map((first) =>
        first.code === "invalid_type"
          ? first.expected
          : first.code === "invalid_value"
            ? first.values.map((v) => JSON.stringify(v)).join(" or ")
            : first.message,
      ),
    ),
  ].join(" or ");
  const received = branches.map((first) => DEFAULT_TYPE_MESSAGE.exec(first.message)?.[1]).find(Boolean);
  if (!expected) return issue.message;
  if (received === "undefined") return `required (${expected})`;
  return `Invalid input: expected ${expected}${received ? `, received ${received}` : ""}`;
}

/**
 * z.record skips a "__proto__" key (so that the parsed object keeps its prototype), but JSON.parse
 * makes one an own key, so a client can send it: the rest would be stored as if it had never been
 * sent. It is refused instead, naming the field, before the record is parsed. A preprocess (not a
 * pipe) so the documented input shape stays the record's.
 */
export const refusingProtoKey = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value, ctx) => {
    if (value !== null && typeof value === "object" && Object.hasOwn(value, "__proto__"))
      ctx.addIssue({ code: "custom", message: '"__proto__" may not be a key' });
    return value;
  }, schema);
