// Five-field cron expressions (minute hour day-of-month month day-of-week, UTC): "*", lists,
// ranges and steps, with the classic rule that when both day fields are restricted (neither
// starts with "*") a day matching either one matches. Names (JAN, MON) and the "@hourly" shorthands are accepted.
// Fields are separated by ASCII whitespace only, and the L, W, # and ? of other crons are refused
// as unsupported rather than read as bad values.

export interface CronSchedule {
  minute: Set<number>;
  hour: Set<number>;
  dayOfMonth: Set<number>;
  month: Set<number>;
  dayOfWeek: Set<number>;
  domRestricted: boolean;
  dowRestricted: boolean;
}

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const SHORTHANDS: Record<string, string> = {
  "@hourly": "0 * * * *",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@weekly": "0 0 * * 0",
  "@monthly": "0 0 1 * *",
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
};

/**
 * Why an expression is refused: `syntax` (it is not one), `unsupported` (it uses what other crons
 * read and this one does not), `never` (well-formed, but no day it names occurs). Callers tell them
 * apart by this, not by the wording of the message.
 */
export type CronProblemKind = "syntax" | "unsupported" | "never";
export interface CronProblem {
  kind: CronProblemKind;
  message: string;
}

/** What parseCron throws: the message says what is wrong, `kind` which sort of wrong it is. */
export class CronError extends Error {
  readonly kind: CronProblemKind;
  constructor({ kind, message }: CronProblem) {
    super(message);
    this.name = "CronError";
    this.kind = kind;
  }
}

const syntax = (message: string) => new CronError({ kind: "syntax", message });

// The whitespace that separates fields, as cron reads it: ASCII only. A no-break or ideographic
// space pasted between fields is refused by name rather than silently read as a separator.
const SEPARATORS = /[ \t\n\r\f\v]+/;
const OTHER_SPACE = /[^\S \t\n\r\f\v]/u;

// Quartz's and Cloudflare's last day ("L", "5L"), nearest weekday ("15W", "LW"), nth weekday
// ("5#2") and no-value ("?"): not read here, so refused as such instead of as a bad number.
const LAST_OR_WEEKDAY = /^(?:\d*[LW]|LW)$/i;

/** The first value of a field written in another cron's extension, and its character(s). */
function extension(field: string, names?: string[]): { token: string; char: string } | null {
  for (const token of field.split(/[,/-]/)) {
    if (names?.includes(token.toUpperCase())) continue;
    const mark = /[#?]/.exec(token)?.[0] ?? (LAST_OR_WEEKDAY.test(token) ? token.replace(/\d/g, "") : undefined);
    if (mark) return { token, char: mark };
  }
  return null;
}

function parseField(
  field: string,
  { min, max, names, label }: { min: number; max: number; names?: string[]; label: string },
): Set<number> {
  const ext = extension(field, names);
  if (ext)
    throw new CronError({
      kind: "unsupported",
      message: `"${ext.char}" in ${label}${ext.token === ext.char ? "" : ` ("${ext.token}")`} is not supported: this cron reads no L, W, # or ? (as Cloudflare's and Quartz's do)`,
    });
  const out = new Set<number>();
  const value = (token: string): number => {
    const upper = token.toUpperCase();
    const named = names?.indexOf(upper) ?? -1;
    const n = named >= 0 ? named + (names === MONTHS ? 1 : 0) : /^\d+$/.test(token) ? Number(token) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw syntax(`"${token}" is not in ${min}-${max}`);
    return n;
  };
  for (const part of field.split(",")) {
    if (part.split("/").length > 2) throw syntax(`"${part}" has more than one step`);
    const [range, stepText] = part.split("/");
    const step = stepText === undefined ? 1 : /^\d+$/.test(stepText) ? Number(stepText) : Number.NaN;
    if (!Number.isInteger(step) || step < 1) throw syntax(`bad step "${stepText}"`);
    let lo: number;
    let hi: number;
    if (range === "*") [lo, hi] = [min, max];
    else if (range.includes("-")) {
      if (range.split("-").length > 2) throw syntax(`range "${range}" has more than two ends`);
      const [a, b] = range.split("-");
      [lo, hi] = [value(a), value(b)];
      if (lo > hi) throw syntax(`range "${range}" runs backwards`);
    } else {
      lo = value(range);
      hi = stepText === undefined ? lo : max;
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

/** Parses an expression or throws a CronError whose message says what is wrong. */
export function parseCron(expression: string): CronSchedule {
  // Own keys only: "__proto__" or "constructor" is no shorthand but a bad expression.
  const name = expression.trim().toLowerCase();
  const expr = Object.hasOwn(SHORTHANDS, name) ? SHORTHANDS[name] : expression.trim();
  const space = OTHER_SPACE.exec(expr)?.[0];
  if (space)
    throw syntax(
      `U+${space.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")} is no space this cron reads between fields: separate them with plain spaces or tabs`,
    );
  const fields = expr.split(SEPARATORS);
  // Six or seven fields is how Quartz (and Spring) write a schedule: seconds first, a year last.
  if (fields.length === 6 || fields.length === 7)
    throw new CronError({
      kind: "unsupported",
      message: `has ${fields.length} fields: a seconds field${fields.length === 7 ? " and a year field" : ""} (as Quartz's crons have) is not supported; write 5 fields: minute hour day-of-month month day-of-week`,
    });
  if (fields.length !== 5) throw syntax("needs 5 fields: minute hour day-of-month month day-of-week");
  const [m, h, dom, mon, dow] = fields;
  // Read in the order they are written, so a refusal names the first field at fault.
  const minute = parseField(m, { min: 0, max: 59, label: "minute" });
  const hour = parseField(h, { min: 0, max: 23, label: "hour" });
  const dayOfMonth = parseField(dom, { min: 1, max: 31, label: "day-of-month" });
  const month = parseField(mon, { min: 1, max: 12, names: MONTHS, label: "month" });
  const dayOfWeek = parseField(dow, { min: 0, max: 7, names: DAYS, label: "day-of-week" });
  if (dayOfWeek.has(7)) dayOfWeek.add(0); // 7 is Sunday too
  const schedule: CronSchedule = {
    minute,
    hour,
    dayOfMonth,
    month,
    dayOfWeek,
    // As Vixie cron and cronie read it: a day field starting with "*" ("*/2" too) does not count
    // for the either-day rule, so "0 9 */2 * MON" is Mondays that fall on odd days.
    domRestricted: !dom.startsWith("*"),
    dowRestricted: !dow.startsWith("*"),
  };
  // Days of the month alone (the weekday open) that no month it names has: it would never run.
  const days = [...schedule.dayOfMonth];
  if (!schedule.dowRestricted && ![...schedule.month].some((mo) => days.some((d) => d <= MONTH_DAYS[mo - 1])))
    throw new CronError({
      kind: "never",
      message: `never runs: day ${days.join(",")} does not occur in month ${[...schedule.month].join(",")}`,
    });
  return schedule;
}

/** The most days each month has (February in a leap year). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The spelling a schedule is stored in: trimmed, its fields one space apart, an @name in lower
 * case. Field names (JAN, mon) keep theirs: they read the same either way (sameSchedule). Only the
 * whitespace that separates fields is collapsed: a space parseCron refuses stays to be refused.
 */
export function normalizeCron(expression: string): string {
  const text = expression.trim().replace(new RegExp(SEPARATORS.source, "g"), " ");
  return text.startsWith("@") ? text.toLowerCase() : text;
}

const sameSet = (a: Set<number>, b: Set<number>) => a.size === b.size && [...a].every((v) => b.has(v));

/**
 * Whether two expressions name the same slots, however spelled: `@hourly` and `0 * * * *`, `MON`
 * and `1`, `7` and `0`, a weekday field naming every day and `*`. The days are compared by what
 * they match (every day of the month against every weekday), so the either-day rule counts. False
 * when either does not parse.
 */
export function sameSchedule(a: string, b: string): boolean {
  let x: CronSchedule;
  let y: CronSchedule;
  try {
    [x, y] = [parseCron(a), parseCron(b)];
  } catch {
    return false;
  }
  if (!sameSet(x.minute, y.minute) || !sameSet(x.hour, y.hour) || !sameSet(x.month, y.month)) return false;
  for (let dom = 1; dom <= 31; dom++)
    for (let dow = 0; dow < 7; dow++) if (dayRule(x, dom, dow) !== dayRule(y, dom, dow)) return false;
  return true;
}

/** Why an expression is refused (null when it parses). */
export function cronProblem(expression: string): CronProblem | null {
  try {
    parseCron(expression);
    return null;
  } catch (err) {
    // Anything else thrown is a fault in the parser, not in the expression: let it surface.
    if (!(err instanceof CronError)) throw err;
    return { kind: err.kind, message: err.message };
  }
}

/** What is wrong with an expression, in words (null when it parses). */
export function cronError(expression: string): string | null {
  return cronProblem(expression)?.message ?? null;
}

export function matches(s: CronSchedule, at: Date): boolean {
  return (
    s.minute.has(at.getUTCMinutes()) &&
    s.hour.has(at.getUTCHours()) &&
    s.month.has(at.getUTCMonth() + 1) &&
    dayMatches(s, at)
  );
}

function dayMatches(s: CronSchedule, at: Date): boolean {
  return dayRule(s, at.getUTCDate(), at.getUTCDay());
}

/** Whether the schedule's day fields match a day of the month (1-31) that falls on a weekday (0-6). */
function dayRule(s: CronSchedule, dayOfMonth: number, dayOfWeek: number): boolean {
  const dom = s.dayOfMonth.has(dayOfMonth);
  const dow = s.dayOfWeek.has(dayOfWeek);
  // A field starting with "*" holds its own values ("*" all of them, "*/2" every other one).
  return s.domRestricted && s.dowRestricted ? dom || dow : dom && dow;
}

const DAY_MS = 86_400_000;
/** How far one search for a next slot looks ahead. */
export const HORIZON_DAYS = 5 * 366;

/** The end of a search from `now`: the first minute after `now` plus `horizonDays`. */
function horizonEnd(now: number, horizonDays: number): number {
  return Math.floor(now / 60_000) * 60_000 + 60_000 + horizonDays * DAY_MS;
}

/**
 * The first minute strictly after `now` that the schedule matches, within `horizonDays` (null if
 * none: "0 0 30 2 *" never comes). Skips whole months, days and hours that cannot match, so a
 * yearly schedule costs a few dozen steps, not half a million minutes.
 */
export function nextSlot(s: CronSchedule, now: number, horizonDays = HORIZON_DAYS): Date | null {
  let t = Math.floor(now / 60_000) * 60_000 + 60_000;
  const end = horizonEnd(now, horizonDays);
  while (t < end) {
    const d = new Date(t);
    const [y, mo, day, h] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours()];
    if (!s.month.has(mo + 1)) t = Date.UTC(y, mo + 1, 1);
    else if (!dayMatches(s, d)) t = Date.UTC(y, mo, day + 1);
    else if (!s.hour.has(h)) t = Date.UTC(y, mo, day, h + 1);
    else if (!s.minute.has(d.getUTCMinutes())) t += 60_000;
    else return d;
  }
  return null;
}

/**
 * When to look at the schedule next: its next slot, or, when none falls within the horizon (29
 * February on a Sunday can be more than five years away), the end of the search, where it resumes.
 * No slot matches before that end, so a check there finds none due and only looks further.
 */
export function nextCheck(s: CronSchedule, now: number, horizonDays = HORIZON_DAYS): Date {
  return nextSlot(s, now, horizonDays) ?? new Date(horizonEnd(now, horizonDays));
}

/**
 * The latest minute at or before `now` that the schedule matches, looking back at most
 * `lookbackMinutes` (null if none): the slot a trigger at `now` should run. A slot is identified
 * by this minute, so a trigger firing twice for it finds the same slot.
 */
export function dueSlot(s: CronSchedule, now: number, lookbackMinutes: number): Date | null {
  const start = Math.floor(now / 60_000) * 60_000;
  for (let i = 0; i <= lookbackMinutes; i++) {
    const at = new Date(start - i * 60_000);
    if (matches(s, at)) return at;
  }
  return null;
}

/**
 * Every minute the schedule matches from `from` (a slot not yet claimed: inclusive, rounded up to
 * its minute) to `now`, oldest first, looking back at most `lookbackMinutes` from `now`: the slots
 * a trigger at `now` owes when it fires less often than the schedule's slots come. A `from` that is
 * not a time reads as the start of the lookback.
 */
export function dueSlots(
  s: CronSchedule,
  { from, now, lookbackMinutes }: { from: number; now: number; lookbackMinutes: number },
): Date[] {
  const end = Math.floor(now / 60_000) * 60_000;
  const earliest = end - lookbackMinutes * 60_000;
  const start = Number.isFinite(from) ? Math.max(Math.ceil(from / 60_000) * 60_000, earliest) : earliest;
  const out: Date[] = [];
  for (let t = start; t <= end; t += 60_000) if (matches(s, new Date(t))) out.push(new Date(t));
  return out;
}
