// Cortex documents as tests write them: a memory note of a tenant, or a message alone in its
// conversation, with the fields a search reads and the rest left empty. Type-only import, so both the Node (unit) and the workerd (workers)
// projects load it.
import type { CortexDoc } from "../services/cortex/search-index";

/** A memory note of `tenantId` with id `refId` and text `body`, outside any conversation. */
export const note = (tenantId: string, refId: string, body: string): CortexDoc => ({
  tenantId,
  kind: "memory",
  refId,
  conversationId: null,
  seq: null,
  role: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  body,
});

/** A message of `tenantId` with id `refId`, stored `role` and text `body`, first in a conversation of its own. */
export const message = (tenantId: string, refId: string, role: string, body: string): CortexDoc => ({
  tenantId,
  kind: "message",
  refId,
  conversationId: `conv_${refId}`,
  seq: 1,
  role,
  createdAt: "2026-01-01T00:00:00.000Z",
  body,
});
