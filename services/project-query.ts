// The tenant's project as a query, for a write scoped to a project to require it in its own
// statement (`exists(…)`): a project delete landing between a route's check and the write then
// leaves no row behind (tools, MCP servers).
import { and, eq } from "drizzle-orm";
import type { drizzle } from "drizzle-orm/d1";
import { projects } from "../db/schema";

export const projectQuery = (d: ReturnType<typeof drizzle>, tenantId: string, projectId: string) =>
  d
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.tenantId, tenantId), eq(projects.id, projectId)));
