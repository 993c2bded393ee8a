// Model failures as the turn reports them: a stable type, the provider's status and message.
import Anthropic from "@anthropic-ai/sdk";

export interface ModelFailure {
  type: "model_error" | "context_overflow";
  status?: number;
  message: string;
}

export function describeModelError(err: unknown): ModelFailure {
  if (err instanceof Anthropic.APIError) {
    const message = err.message || `model call failed with status ${err.status}`;
    const overflow = err.status === 400 && /prompt is too long/i.test(message);
    return { type: overflow ? "context_overflow" : "model_error", status: err.status ?? undefined, message };
  }
  return { type: "model_error", message: err instanceof Error ? err.message : String(err) };
}
