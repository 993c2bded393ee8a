// One shape for every list route: `{data: [...], next}` paged by `?limit=&cursor=` (pass `next`
// back as `cursor` until it is null).
// A route never drops items silently: past `limit` there is always a `next`.
import { z } from "zod";
import { isId } from "../../core/ids";

export interface Page<T> {
  data: T[];
  next: string | number | null;
}

/** `rows` fetched with `limit + 1`: the extra row only tells whether there is a next page. */
export function pageOf<T>(rows: readonly T[], limit: number, cursorOf: (last: T) => string | number): Page<T> {
  const data = rows.slice(0, limit);
  return { data, next: rows.length > limit ? cursorOf(data[data.length - 1]) : null };
}

/** The list body: `data` and `next`, nothing else. */
export const listBody = <T>(page: Page<T>) => ({ data: page.data, next: page.next });

/** A cursor that is an id of one kind (the last id of the previous page). */
export const idCursor = (prefix: string, what: string) =>
  z
    .string()
    .refine((v) => isId(prefix, v), `not ${what}`)
    .optional();
