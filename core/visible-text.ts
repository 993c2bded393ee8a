// What a name people read in lists, and a prompt may quote, may hold: no control characters, line
// separators or bidi overrides (a title can otherwise reorder or break the line it is shown in), and
// at least one visible character. visibleText is that rule as a schema (the routes' visibleName,
// a key's name, a note's tags); the automatic title (core/title.ts) is cleaned by the same patterns.
import { z } from "zod";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the rule is about
export const HIDDEN_OR_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/**
 * A letter, digit, punctuation mark or symbol: something a reader sees. Not the letters and the
 * symbol that show nothing: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0) and the blank
 * Braille pattern (U+2800).
 */
export const VISIBLE = /(?![\u115f\u1160\u3164\uffa0\u2800])[\p{L}\p{N}\p{P}\p{S}]/u;

/** The text without what HIDDEN_OR_CONTROL names. */
export const withoutHidden = (text: string): string => text.replace(new RegExp(HIDDEN_OR_CONTROL, "g"), "");

/** A name people read: trimmed, 1 to `max` characters, nothing HIDDEN_OR_CONTROL names, something VISIBLE. */
export const visibleText = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((v) => !HIDDEN_OR_CONTROL.test(v), {
      message: "no control characters, line separators or bidi overrides",
    })
    .refine((v) => VISIBLE.test(v), "must contain a visible character");
