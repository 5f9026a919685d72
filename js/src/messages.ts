/*
 * messages.ts: the messages of client protocol v1 (docs/protocol.md) as
 * types, and the parse of what a node sends.  A node's message is checked
 * for what the client reads of it (its op and the members of that op, by
 * type); members the client does not know are ignored, as the protocol
 * asks.  Anything else is a ProtocolError, which the connection turns into
 * an "error" event: never an exception into the application.
 */

export interface Ready {
  session: string;
  bind: string;
  resume: string;
  node: string;
  heartbeat_ms: number;
  /** agents only: the held acknowledgement */
  acked?: number;
}

export interface TypingStarted { thread: string; place: string | null; principal: string; expires_at: string }
export interface RunDocument { run: string; thread: string; agent: string; version: number; [member: string]: unknown }
export interface AgentPresence { agent: string; state: "online" | "busy" | "offline"; billing_mode?: string; actor?: string }
export interface NotificationHint {
  nid: string; recipient: string; hint_kind: string; quiet: boolean; count: number;
  thread?: string; message?: string; target?: string; place?: string;
}
export interface AgentEvent { id: number; type: string; data: unknown; created_at: string }
export interface AutocompleteRequest { request: string; principal: string; query: string }
export type AutocompleteItem = Record<string, unknown>;

export type ErrorCode = "timeout" | "unavailable" | "rejected";

export type NodeMessage =
  | { op: "ready"; ready: Ready }
  | { op: "heartbeat_ack" }
  | { op: "autocomplete_result"; ref: string; items: AutocompleteItem[] }
  | { op: "error"; request: string; code: string }
  | { op: "event"; type: string; data: Record<string, unknown> }
  | { op: "unknown"; name: string };

export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProtocolError";
  }
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

function str(m: Obj, k: string): string {
  const v = m[k];
  if (typeof v !== "string") throw new ProtocolError(`"${k}" is not a string`);
  return v;
}

/** Parses one text message of a node; throws ProtocolError. */
export function parseNodeMessage(text: string): NodeMessage {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    throw new ProtocolError("not JSON");
  }
  if (!isObj(m)) throw new ProtocolError("not a JSON object");
  const op = m.op;
  if (typeof op !== "string") throw new ProtocolError("no op");
  switch (op) {
    case "event":
      /* the hot path (run.updated to every viewer): the parsed object itself, checked, not copied */
      if (typeof m.type !== "string") throw new ProtocolError('"type" is not a string');
      if (!isObj(m.data)) throw new ProtocolError("event without a data object");
      return m as { op: "event"; type: string; data: Obj };
    case "heartbeat_ack":
      return { op };
    case "ready": {
      const hb = m.heartbeat_ms;
      if (!isInt(hb) || hb < 1000 || hb > 600000) throw new ProtocolError("ready without heartbeat_ms");
      if (m.acked !== undefined && !isInt(m.acked)) throw new ProtocolError("ready with a bad acked");
      const ready: Ready = { session: str(m, "session"), bind: str(m, "bind"), resume: str(m, "resume"),
        node: str(m, "node"), heartbeat_ms: hb };
      if (m.acked !== undefined) ready.acked = m.acked as number;
      return { op, ready };
    }
    case "autocomplete_result": {
      const items = m.items;
      if (!Array.isArray(items) || !items.every(isObj)) throw new ProtocolError("autocomplete_result without items");
      return { op, ref: str(m, "ref"), items: items as AutocompleteItem[] };
    }
    case "error":
      return { op, request: str(m, "request"), code: str(m, "code") };
    default:
      return { op: "unknown", name: op };
  }
}

/** The checks of each event type's data the package relies on. */
export function checkEventData(type: string, data: Obj): string | null {
  switch (type) {
    case "run.updated":
      return typeof data.run === "string" && isInt(data.version) ? null : "run.updated without run and version";
    case "typing.started":
      return typeof data.thread === "string" && typeof data.principal === "string" ? null : "typing.started without thread and principal";
    case "agent.presence_changed":
      return typeof data.agent === "string" && typeof data.state === "string" ? null : "agent.presence_changed without agent and state";
    case "notification.created":
      return typeof data.nid === "string" && typeof data.recipient === "string" ? null : "notification.created without nid and recipient";
    case "agent.event":
      return isInt(data.id) && typeof data.type === "string" ? null : "agent.event without id and type";
    case "command.autocomplete_requested":
      return typeof data.request === "string" && typeof data.query === "string" ? null : "command.autocomplete_requested without request and query";
    default:
      return null;
  }
}
