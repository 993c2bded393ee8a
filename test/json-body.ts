// A response body as tests read it: the text, and its JSON when it is JSON (undefined otherwise).
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
