// Shared by the agent-loop unit tests: a `persist` that stores a turn's messages in an array,
// numbered as the record would number them.
import type { NewMessage, StoredMessage } from "../../core/types";

export function persistInto(saved: StoredMessage[]) {
  return async (messages: NewMessage[]): Promise<StoredMessage[]> => {
    const stored = messages.map((m, i) => ({
      ...m,
      id: `m${saved.length + i}`,
      seq: saved.length + i + 1,
      createdAt: "",
    }));
    saved.push(...stored);
    return stored;
  };
}
