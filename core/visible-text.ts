// What a name people read in lists, and a prompt may quote, may hold: no control characters, line
// separators or bidi overrides (a title can otherwise reorder or break the line it is shown in), and
// at least one visible character. The route rule (workers/chat/validate.ts visibleName) refuses a
// name against these; the automatic title (core/title.ts) is cleaned by them.

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the rule is about
export const HIDDEN_OR_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** A letter, digit, punctuation mark or symbol: something a reader sees. */
export const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;

/** The text without what HIDDEN_OR_CONTROL names. */
export const withoutHidden = (text: string): string => text.replace(new RegExp(HIDDEN_OR_CONTROL, "g"), "");
