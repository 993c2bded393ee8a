// A request whose path is a route but whose method is not gets 405 with `Allow`, not a 404 that
// would say the resource is not there. The app's own router is asked, method by method, whether a
// route (not middleware, which is registered as ALL) has the path, so the answer follows Hono's
// path syntax exactly. A route that answers GET answers HEAD too (Hono's fetch).
import type { RouterRoute } from "hono/types";
import { METHOD_NAME_ALL, type Router } from "hono/router";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** The methods the app's routes answer at `path`, in a fixed order; empty when no route has the path. */
export function allowedMethods(app: { router: Router<[unknown, RouterRoute]> }, path: string): string[] {
  const allowed = METHODS.filter((method) =>
    app.router.match(method, path)[0].some(([[, route]]) => route.method !== METHOD_NAME_ALL),
  );
  return allowed.flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m]));
}
