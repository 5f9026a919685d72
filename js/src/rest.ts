/*
 * rest.ts: the REST calls of a node (docs/protocol.md, "REST endpoints"
 * and "The terminal: REST calls") as functions.  Every call takes the
 * node's or the edge's HTTP base URL and a token; an answer other than the
 * documented success is a RestError with the HTTP status and the body's
 * "error" code, so an application switches on codes, never on text.
 */

import { checkUuid, isUuid } from "./args.js";

export interface RestOptions {
  /** http(s) URL the paths are resolved against: the edge or a node (in a page: its origin by default) */
  base?: string;
  token: string;
  /** the fetch to use (default: the platform's) */
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

export class RestError extends Error {
  constructor(readonly status: number, readonly code: string) {
    super(`HTTP ${status}${code ? " " + code : ""}`);
    this.name = "RestError";
  }
}

/** The http(s) base of a /gateway URL: ws://h/gateway -> http://h/. */
export function httpBaseOf(gatewayUrl: string): string {
  const u = new URL(gatewayUrl);
  u.protocol = u.protocol === "wss:" ? "https:" : "http:";
  u.pathname = u.pathname.replace(/gateway$/, "");
  u.search = u.hash = "";
  return u.href;
}

export function resolveUrl(path: string, base: string | undefined): URL {
  const page = (globalThis as { location?: { href: string } }).location;
  const from = base ?? page?.href;
  if (!from) throw new TypeError("base is needed outside a page");
  return new URL(path.replace(/^\//, ""), from.endsWith("/") || !base ? from : from + "/");
}

export async function call<T>(o: RestOptions, method: string, path: string, ok: number, body?: unknown, keepalive = false): Promise<T> {
  const f = o.fetch ?? fetch;
  const headers: Record<string, string> = { Authorization: "Bearer " + o.token };
  const init: RequestInit = { method, headers, cache: "no-store", keepalive };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  if (o.signal) init.signal = o.signal;
  const r = await f(resolveUrl(path, o.base).href, init);
  let json: unknown = null;
  const text = await r.text();
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (r.status !== ok) {
    const code = json && typeof (json as { error?: unknown }).error === "string" ? (json as { error: string }).error : "";
    throw new RestError(r.status, code);
  }
  return json as T;
}

export interface PresenceRow { person: string; device: string; node: string; focus: string | null; idle: boolean; updated_at: string }
export interface AgentStatus { agent: string; state: "online" | "busy" | "offline"; heartbeat_at: string | null }
export interface AgentEventsPage { events: Array<{ id: number; type: string; data: unknown; created_at: string }>; acked: number; holder: string }

/** GET /v1/presence: the present devices of the persons who may see the thread. */
export async function presence(o: RestOptions, thread: string, persons: string[]): Promise<PresenceRow[]> {
  const q = new URLSearchParams({ thread });
  for (const p of persons) q.append("person", p);
  return (await call<{ presence: PresenceRow[] }>(o, "GET", "v1/presence?" + q, 200)).presence;
}

/** GET /v1/agents/presence: each agent's state, in the order asked. */
export async function agentsPresence(o: RestOptions, agents: string[]): Promise<AgentStatus[]> {
  const q = new URLSearchParams();
  for (const a of agents) q.append("agent", a);
  return (await call<{ agents: AgentStatus[] }>(o, "GET", "v1/agents/presence?" + q, 200)).agents;
}

/** GET /v1/agent/events: one poll window (a new holder: it fences a WebSocket consumer of the agent). */
export async function pollAgentEvents(o: RestOptions, p: { after?: number; waitMs?: number; max?: number } = {}): Promise<AgentEventsPage> {
  const q = new URLSearchParams();
  if (p.after !== undefined) q.set("after", String(p.after));
  if (p.waitMs !== undefined) q.set("wait_ms", String(p.waitMs));
  if (p.max !== undefined) q.set("max", String(p.max));
  const s = q.toString();
  return call<AgentEventsPage>(o, "GET", "v1/agent/events" + (s ? "?" + s : ""), 200);
}

export interface TerminalHost { host: string; name: string; state: string; connected: boolean }
export interface TerminalGrant { session: string; stream: string; token: string; expires_at: string }

/** GET /v1/terminal/hosts: the person's hosts. */
export async function terminalHosts(o: RestOptions): Promise<TerminalHost[]> {
  return (await call<{ hosts: TerminalHost[] }>(o, "GET", "v1/terminal/hosts", 200)).hosts;
}

/* A grant is used as it comes (its session in the next attach's path, its
 * stream as the URL, its token sent): one that is not what protocol.md
 * says is a RestError "bad_grant", never a TypeError later. */
async function grant(answer: Promise<TerminalGrant>): Promise<TerminalGrant> {
  const g = (await answer) as Partial<TerminalGrant> | null;
  if (!g || !isUuid(g.session) || g.stream !== "/terminal/stream/" + g.session
    || typeof g.token !== "string" || !/^[\x21-\x7e]{1,1024}$/.test(g.token))
    throw new RestError(201, "bad_grant");
  return g as TerminalGrant;
}

/** POST /v1/terminal/sessions: a new session on the host, and its first grant. */
export function openTerminalSession(o: RestOptions, host: string): Promise<TerminalGrant> {
  return grant(call<TerminalGrant>(o, "POST", "v1/terminal/sessions", 201, { host }));
}

/** POST /v1/terminal/sessions/<id>/attach: a fresh grant for a detached session. */
export async function attachTerminalSession(o: RestOptions, session: string): Promise<TerminalGrant> {
  checkUuid("session", session);   /* it goes into the path */
  return grant(call<TerminalGrant>(o, "POST", `v1/terminal/sessions/${session}/attach`, 201, {}));
}

/** DELETE /v1/terminal/sessions/<id>: ends the session (also when it ended already). */
export async function endTerminalSession(o: RestOptions, session: string, keepalive = false): Promise<void> {
  checkUuid("session", session);
  await call<null>(o, "DELETE", `v1/terminal/sessions/${session}`, 204, undefined, keepalive);
}
