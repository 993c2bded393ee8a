// Model failures as the turn reports them: a stable type, the provider's status and message.
import Anthropic from "@anthropic-ai/sdk";

export interface ModelFailure {
  type: "model_error" | "context_overflow";
  status?: number;
  message: string;
  /** On an overflow: what the provider counted and its real maximum ("N tokens > M maximum"), when it said. */
  overflow?: { promptTokens: number; maxTokens: number };
}

export function describeModelError(err: unknown): ModelFailure {
  if (err instanceof Anthropic.APIError) {
    const message = err.message || `model call failed with status ${err.status}`;
    const overflow = err.status === 400 && /prompt is too long/i.test(message);
    const figures = overflow ? /(\d+)\s*tokens\s*>\s*(\d+)\s*maximum/i.exec(message) : null;
    return {
      type: overflow ? "context_overflow" : "model_error",
      status: err.status ?? undefined,
      message,
      ...(figures ? { overflow: { promptTokens: Number(figures[1]), maxTokens: Number(figures[2]) } } : {}),
    };
  }
  return { type: "model_error", message: err instanceof Error ? err.message : String(err) };
}
