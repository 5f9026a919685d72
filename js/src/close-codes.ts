/*
 * close-codes.ts: what the client does after each close of /gateway, as
 * docs/protocol.md ("Close codes") tells a client to, in one table that
 * docs/client.md repeats and test/unit/close-codes.test.mjs checks row by
 * row.
 *
 *   resume     reconnect with the session's resume token (identify when
 *              there is none yet), at once or after the back-off
 *   identify   reconnect with the original token: a new session
 *   final      stop in state "disconnected": reconnecting would loop or
 *              take the device or the stream from another copy
 */

export type CloseAction = "resume" | "identify" | "final";

export interface CloseDecision {
  action: CloseAction;
  /** reconnect without waiting for the back-off */
  now: boolean;
  /** why, as a stable code the application can switch on */
  reason: CloseReason;
}

export type CloseReason =
  | "node_stopping" | "network" | "bad_utf8" | "message_too_big" | "internal_error"
  | "token_refused" | "resume_lapsed" | "protocol_error" | "identify_timeout"
  | "send_queue_full" | "heartbeat_timeout" | "fenced" | "replaced" | "unknown";

export interface CloseContext {
  /** the op this connection identified with */
  op: "identify" | "resume";
  /** the close's reason text (only 4002's "no identify in time" matters) */
  reasonText?: string;
  /** the client had stopped reading for 2 s or more before a 1006 */
  stalled?: boolean;
}

function d(action: CloseAction, now: boolean, reason: CloseReason): CloseDecision {
  return { action, now, reason };
}

/** The decision for a close of the current connection (a stale one's close is ignored by the caller). */
export function decideClose(code: number, ctx: CloseContext): CloseDecision {
  switch (code) {
    case 1001: return d("resume", true, "node_stopping");
    case 1006: return ctx.stalled ? d("resume", false, "send_queue_full") : d("resume", false, "network");
    case 1007: return d("final", false, "bad_utf8");
    case 1009: return d("resume", false, "message_too_big");
    case 1011: return d("resume", false, "internal_error");
    case 4001: return ctx.op === "resume" ? d("identify", true, "resume_lapsed") : d("final", false, "token_refused");
    case 4002:
      return ctx.reasonText === "no identify in time" ? d("resume", true, "identify_timeout")
        : d("final", false, "protocol_error");
    case 4008: return d("resume", false, "send_queue_full");
    case 4009: return d("resume", false, "heartbeat_timeout");
    case 4015: return d("final", false, "fenced");
    case 4017: return d("final", false, "replaced");
    default: return d("resume", false, code === 1000 ? "network" : "unknown");
  }
}
