// The hourly cron trigger. Today: housekeeping of expired websocket tickets. Automations (a later
// issue) hang their runs off the same handler.
import { sweepExpiredTickets } from "./ws-tickets";

export async function runScheduled(controller: ScheduledController, env: Env): Promise<{ ticketsSwept: number }> {
  const ticketsSwept = await sweepExpiredTickets(env.DB, controller.scheduledTime);
  return { ticketsSwept };
}
