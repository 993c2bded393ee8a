/**
 * Release days (the Models API's `created_at`) and the deprecation days of retired models, which
 * the catalog does not hold. From each model's overview page on platform.claude.com/docs/en/models
 * and https://platform.claude.com/docs/en/about-claude/model-deprecations, as gathered in the
 * project's model research (2026-12-03). A model missing here is dated at the epoch, as the API
 * does for an unknown release date.
 */
export const RELEASED: Record<string, string> = {
  "claude-fable-5-2": "2026-11-09",
  "claude-mythos-5-2": "2026-11-09",
  "claude-haiku-5-5": "2026-10-07",
  "claude-sonnet-5-5": "2026-09-28",
  "claude-opus-5-5": "2026-09-22",
  "claude-fable-5-1": "2026-09-01",
  "claude-mythos-5-1": "2026-09-01",
  "claude-opus-5": "2026-07-24",
  "claude-sonnet-5": "2026-06-30",
  "claude-fable-5": "2026-06-09",
  "claude-mythos-5": "2026-06-09",
  "claude-opus-4-8": "2026-05-28",
  "claude-opus-4-7": "2026-04-16",
  "claude-sonnet-4-6": "2026-02-17",
  "claude-opus-4-6": "2026-02-05",
  "claude-opus-4-5": "2025-11-24",
  "claude-haiku-4-5": "2025-10-15",
  "claude-sonnet-4-5": "2025-09-29",
  "claude-opus-4-1": "2025-08-05",
  "claude-opus-4-0": "2025-05-14",
  "claude-sonnet-4-0": "2025-05-14",
};

export const RETIRED_DEPRECATED_ON: Record<string, string> = {
  "claude-sonnet-4-5": "2026-09-30",
  "claude-opus-4-1": "2026-06-05",
  "claude-opus-4-0": "2026-04-14",
  "claude-sonnet-4-0": "2026-04-14",
  "claude-3-7-sonnet-20250219": "2025-10-28",
  "claude-3-5-haiku-20241022": "2025-12-19",
  "claude-3-opus-20240229": "2025-06-30",
  "claude-3-5-sonnet-20241022": "2025-08-13",
  "claude-3-5-sonnet-20240620": "2025-08-13",
  "claude-3-sonnet-20240229": "2025-01-21",
  "claude-2.1": "2025-01-21",
  "claude-2.0": "2025-01-21",
};
