// A request whose path is a route but whose method is not gets 405 with `Allow`, not a 404 that
// would say the resource is not there. The methods come from the app's own routes; middleware
// (registered as ALL) is no method. A route that answers GET answers HEAD too (Hono's fetch).
import { METHOD_NAME_ALL } from "hono/router";

/** A route path (`/v1/conversations/:id`, `/v1/admin/*`) as a pattern for a whole request path. */
const patternOf = (path: string): RegExp =>
  new RegExp(
    `^${path
      .split("/")
      .map((part) =>
        part === "*" ? ".*" : part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("/")}$`,
  );

const patterns = new Map<string, RegExp>();

/** The methods the routes answer at `path`, in a fixed order; empty when no route has the path. */
export function allowedMethods(routes: readonly { method: string; path: string }[], path: string): string[] {
  const methods = new Set<string>();
  for (const route of routes) {
    if (route.method === METHOD_NAME_ALL) continue;
    let pattern = patterns.get(route.path);
    if (!pattern) patterns.set(route.path, (pattern = patternOf(route.path)));
    if (pattern.test(path)) methods.add(route.method);
  }
  if (methods.has("GET")) methods.add("HEAD");
  return ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].filter((m) => methods.has(m));
}
