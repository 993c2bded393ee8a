// The cron trigger: every tick claims the due automation slots (fanned out through the
// automation queue) and sweeps expired websocket tickets.
import { claimDueRuns, type AutomationJob } from "./automations";
import { sweepExpiredTickets } from "./ws-tickets";

export async function runScheduled(controller: ScheduledController, env: Env): Promise<{ ticketsSwept: number; claimed: number; closed: number }> {
  const now = controller.scheduledTime;
  const [ticketsSwept, runs] = await Promise.all([sweepExpiredTickets(env.DB, now), claimDueRuns(env.DB, env.AUTOMATION_QUEUE as Queue<AutomationJob>, now)]);
  return { ticketsSwept, ...runs };
}
