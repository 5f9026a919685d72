/*
 * client.ts: one connection of a person's device or an agent consumer to
 * /gateway (docs/protocol.md), kept up across drops and nodes.  States as
 * centrifuge-js has them: connecting, connected, disconnected (a final
 * refusal, with its reason: never retried; and a client not yet opened)
 * and closed (the application's close()).  As in centrifuge-js, making a
 * client and starting it are two steps, and the first state event comes
 * in a microtask after open(), so a listener added right after connect()
 * sees it.  What each close does is close-codes.ts; the delay before a
 * reconnect is backoff.ts.  The session's resume token is kept from every
 * ready, so a reconnect resumes the same session on whichever node answers,
 * and reconnects go round the reconnectUrl list (a cluster without an edge).
 */

import { checkItems, checkQuery, checkUuid } from "./args.js";
import { backoffDelay, checkBackoff, type BackoffOptions } from "./backoff.js";
import { decideClose, type CloseReason } from "./close-codes.js";
import { Emitter } from "./emitter.js";
import {
  checkEventData, parseNodeMessage, ProtocolError,
  type AgentEvent, type AgentPresence, type AutocompleteItem, type AutocompleteRequest,
  type NotificationHint, type Ready, type RunDocument, type TypingStarted,
} from "./messages.js";
import { onOnline, onVisibility, pageHidden } from "./platform.js";
import { readToken } from "./tokens.js";
import { discard, OPEN, webSocketClass, wire, type WebSocketConstructor, type WebSocketLike } from "./transport.js";

export type State = "connecting" | "connected" | "disconnected" | "closed";

export interface StateChange {
  state: State;
  /** the close code that led here (0: none) */
  code: number;
  /** why: the close's reason (close-codes.ts), "connect", "ready", "protocol" or "client" */
  reason: CloseReason | "connect" | "ready" | "protocol" | "client";
}

export interface ClientError {
  /** protocol: a node's message the client does not understand; request: an op the node answered with error */
  kind: "protocol" | "request";
  message: string;
  request?: string;
  code?: string;
}

export interface ClientEvents {
  state: StateChange;
  ready: Ready & { resumed: boolean };
  typing: TypingStarted;
  run: RunDocument;
  agent_presence: AgentPresence;
  notification: NotificationHint;
  agent_event: AgentEvent;
  autocomplete_request: AutocompleteRequest;
  /** every event, known or not: {type, data} */
  event: { type: string; data: Record<string, unknown> };
  error: ClientError;
  /** every close of a connection, the decision taken after it included */
  close: { code: number; reason: string; action: "resume" | "identify" | "final" };
}

export interface ConnectOptions {
  /** ws:// or wss:// URL of /gateway (a node, or the edge) */
  url: string;
  /** a person-device token or an agent token */
  token: string;
  /** the URL of every reconnect, or a list taken in turn, one per reconnect (default: url) */
  reconnectUrl?: string | readonly string[];
  /** a resume token kept from an earlier ready: the first connect resumes that session */
  resumeToken?: string;
  /** the WebSocket class (default: the platform's; `ws` on Node before 22) */
  WebSocket?: WebSocketConstructor;
  backoff?: BackoffOptions;
  /** the node's --typing-interval in ms (default 1000, 0: none) */
  typingIntervalMs?: number;
  /** how many runs client.runs keeps, the most recently updated (default 1000, 1 to 1000000) */
  maxRuns?: number;
  /** send idle when the page is hidden (default true where there is a page; never on an agent's connection) */
  autoIdle?: boolean;
}

/* the node's limit of typing threads per interval (docs/protocol.md, GW_TYPING_SLOTS) */
const TYPING_SLOTS = 4;
/* a timer that fires this late means the client stopped reading meanwhile (docs/protocol.md, 4008) */
const STALL_MS = 2000;
const TICK_MS = 1000;
/* a connection this old at its drop starts the back-off again from its first step */
const HEALTHY_MS = 5000;

type Kind = "person" | "agent";

const isWsUrl = (u: unknown): u is string => typeof u === "string" && /^wss?:\/\//.test(u);

export class Client extends Emitter<ClientEvents> {
  /** disconnected until open(), then as the state events say */
  state: State = "disconnected";
  /** the last ready (null before the first) */
  ready: Ready | null = null;
  /** person or agent, from the first ready */
  kind: Kind | null = null;
  /** the newest snapshot of each run seen (run.updated, coalesced by version), the maxRuns most recently updated, oldest first */
  readonly runs = new Map<string, RunDocument>();

  private readonly opts: ConnectOptions;
  private readonly WS: WebSocketConstructor;
  /* what the token says it is, until a ready says it (the kind of op refused before ready) */
  private readonly tokenKind: Kind | null;
  private readonly reconnectUrls: string[];
  private nextUrl = 0;
  private opened = false;
  private ws: WebSocketLike | null = null;
  private op: "identify" | "resume" = "identify";
  private resumeToken: string | null;
  private attempts = 0;
  private connects = 0;
  private readyAt = 0;
  private heard = false;
  private lastSent = 0;
  private lastTick = 0;
  private stalledUntil = 0;
  private silenceMs = 0;
  private silenceDue = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private tickTimer: ReturnType<typeof setInterval> | null = null;
  private silenceTimer: ReturnType<typeof setTimeout> | null = null;
  private focusThread: string | null = null;
  private isIdle = false;
  private agentState: "online" | "busy" | null = null;
  private readonly typingSent = new Map<string, number>();
  private refs = 0;
  private readonly pending = new Map<string, (items: AutocompleteItem[]) => void>();
  private readonly unhook: Array<() => void> = [];

  constructor(opts: ConnectOptions) {
    super();
    if (!isWsUrl(opts.url)) throw new TypeError("url must be a ws:// or wss:// URL");
    const r = opts.reconnectUrl;
    const urls: unknown[] = r === undefined ? [opts.url] : Array.isArray(r) ? [...r] : [r];   /* a copy: the caller's list may change */
    if (urls.length === 0 || !urls.every(isWsUrl))
      throw new TypeError("reconnectUrl must be a ws:// or wss:// URL, or a non-empty list of them");
    if (typeof opts.token !== "string" || !/^[\x21-\x7e]{1,1024}$/.test(opts.token))
      throw new TypeError("token must be 1 to 1024 printable ASCII characters");
    checkBackoff(opts.backoff ?? {});
    const ti = opts.typingIntervalMs;
    if (ti !== undefined && !(Number.isInteger(ti) && ti >= 0 && ti <= 60000))
      throw new RangeError("typingIntervalMs must be an integer from 0 to 60000");
    const mr = opts.maxRuns;
    if (mr !== undefined && !(Number.isInteger(mr) && mr >= 1 && mr <= 1000000))
      throw new RangeError("maxRuns must be an integer from 1 to 1000000");
    this.opts = opts;
    this.WS = webSocketClass(opts.WebSocket);
    this.reconnectUrls = urls as string[];
    /* the first reconnect goes to the URL after the one that just dropped */
    this.nextUrl = this.reconnectUrls.indexOf(opts.url) + 1;
    const claims = readToken(opts.token);
    this.tokenKind = claims?.kind === "agent" ? "agent" : claims?.kind === "person-device" ? "person" : null;
    this.resumeToken = opts.resumeToken ?? null;
    this.unhook.push(onOnline(() => this.wake()));
    if (opts.autoIdle ?? true) {
      this.isIdle = pageHidden();
      /* idle is an op for persons: an agent's connection would be closed with 4002 */
      this.unhook.push(onVisibility((hidden) => { if ((this.kind ?? this.tokenKind) !== "agent") this.idle(hidden); }));
    }
  }

  /** Starts the connection (connect() calls it), once: the state is connecting at once, and its
   * state event (reason "connect") comes in a microtask, after the calling code's listeners are on. */
  open(): this {
    if (this.opened || this.state === "closed") return this;
    this.opened = true;
    this.state = "connecting";
    queueMicrotask(() => {
      if (this.state !== "connecting") return;          /* closed meanwhile */
      this.emit("state", { state: "connecting", code: 0, reason: "connect" });
      this.dial();
    });
    return this;
  }

  /** The resume token of the session (keep it to resume after a reload), or null. */
  get resume(): string | null {
    return this.resumeToken;
  }

  /* --- ops ---------------------------------------------------------------- */

  /** The thread the person looks at (null: none); sent again after every reconnect. */
  focus(thread: string | null): boolean {
    this.only("person", "focus");
    if (thread !== null) checkUuid("thread", thread);
    this.focusThread = thread;
    return this.send({ op: "focus", thread });
  }

  /** Whether the person is idle on this device; sent again after every reconnect. */
  idle(idle: boolean): boolean {
    this.only("person", "idle");
    if (typeof idle !== "boolean") throw new TypeError("idle must be a boolean");
    this.isIdle = idle;
    return this.send({ op: "idle", idle });
  }

  /** A keystroke in a thread: sent at most once per thread per typingIntervalMs, 4 threads per interval; true when sent. */
  typing(thread: string): boolean {
    this.only("person", "typing");
    checkUuid("thread", thread);
    if (this.state !== "connected") return false;
    const now = Date.now();
    const every = this.opts.typingIntervalMs ?? 1000;
    let live = 0;
    for (const [t, at] of this.typingSent) {
      if (now - at >= every) this.typingSent.delete(t);
      else if (t === thread) return false;
      else live++;
    }
    if (every > 0 && live >= TYPING_SLOTS) return false;
    this.typingSent.set(thread, now);
    return this.send({ op: "typing", thread });
  }

  /** An agent's state (online or busy), kept and sent again after every reconnect. */
  setAgentState(state: "online" | "busy"): boolean {
    this.only("agent", "setAgentState");
    if (state !== "online" && state !== "busy") throw new TypeError('state must be "online" or "busy"');
    this.agentState = state;
    return this.send({ op: "heartbeat", state });
  }

  /** Agents: every event up to id is done. */
  ack(id: number): boolean {
    this.only("agent", "ack");
    if (!Number.isSafeInteger(id) || id < 0) throw new RangeError("ack takes an event ID from 0 to 2^53 - 1");
    return this.send({ op: "ack", event: id });
  }

  /** Persons: ask an agent's consumer on this node; resolves with its items ([] when nobody answered or the connection dropped). */
  autocomplete(agent: string, query: string): Promise<AutocompleteItem[]> {
    this.only("person", "autocomplete");
    checkUuid("agent", agent);
    checkQuery(query);
    const ref = "r" + ++this.refs;
    if (!this.send({ op: "autocomplete", agent, ref, query })) return Promise.resolve([]);
    return new Promise((resolve) => this.pending.set(ref, resolve));
  }

  /** Agents: the answer to an autocomplete_request. */
  answerAutocomplete(request: string, items: AutocompleteItem[]): boolean {
    this.only("agent", "answerAutocomplete");
    checkUuid("request", request);
    checkItems(items);
    return this.send({ op: "autocomplete_answer", request, items });
  }

  /** Ends the connection for good (state closed). */
  close(): void {
    if (this.state === "closed") return;
    this.stopTimers();
    if (this.ws) discard(this.ws, 1000, "");
    this.ws = null;
    for (const f of this.unhook.splice(0)) f();
    this.settlePending();
    this.setState("closed", 0, "client");
  }

  /* --- the connection ------------------------------------------------------ */

  /* protocol.md: an op of the other kind closes the connection with 4002,
   * a final close; refused at the call instead, the kind known from the
   * ready or, before it, from the token */
  private only(kind: Kind, op: string): void {
    const k = this.kind ?? this.tokenKind;
    if (k && k !== kind)
      throw new Error(`${op} is an op for ${kind === "agent" ? "agent consumers" : "persons' devices"}: ` +
        `on ${k === "agent" ? "an agent's" : "a person's"} connection the node would close it with 4002 for good`);
  }

  private send(msg: object): boolean {
    if (this.state !== "connected" || !this.ws || this.ws.readyState !== OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    this.lastSent = Date.now();
    return true;
  }

  private setState(state: State, code: number, reason: StateChange["reason"]): void {
    this.state = state;
    this.emit("state", { state, code, reason });
  }

  private dial(): void {
    if (this.state !== "connecting") return;
    this.retryTimer = null;
    const urls = this.reconnectUrls;
    const url = this.connects++ === 0 ? this.opts.url : urls[this.nextUrl++ % urls.length]!;
    this.op = this.resumeToken ? "resume" : "identify";
    let ws: WebSocketLike;
    try {
      ws = new this.WS(url);
    } catch (err) {
      this.protocolError("cannot open a WebSocket: " + String(err));
      return this.retry(false);
    }
    this.ws = ws;
    ws.binaryType = "arraybuffer";
    wire(ws, () => this.sendIdentify(), (code, reason) => this.dropped(code, reason));
    ws.onmessage = (ev) => this.receive(ev.data);
  }

  private sendIdentify(): void {
    if (!this.ws || this.ws.readyState !== OPEN) return;
    const token = this.op === "resume" ? this.resumeToken : this.opts.token;
    this.ws.send(JSON.stringify({ op: this.op, token }));
  }

  private receive(data: unknown): void {
    /* the tick reads the flag: no clock read per message (bench/client_dispatch) */
    this.heard = true;
    if (typeof data !== "string") return this.abandon("a binary message");
    let m;
    try {
      m = parseNodeMessage(data);
    } catch (err) {
      return this.abandon((err as ProtocolError).message);
    }
    switch (m.op) {
      case "event": return this.dispatch(m.type, m.data);
      case "heartbeat_ack": return;
      case "ready": return this.onReady(m.ready);
      case "autocomplete_result": {
        const resolve = this.pending.get(m.ref);
        this.pending.delete(m.ref);
        if (resolve) resolve(m.items);
        return;
      }
      case "error":
        this.emit("error", { kind: "request", message: `the node answered ${m.request} with ${m.code}`, request: m.request, code: m.code });
        /* identify or resume not done: the connection waits for it again (docs/protocol.md); once,
         * however many errors came: a second identify while one runs is closed with 4002 */
        if (this.state === "connecting" && !this.retryTimer && (m.request === "identify" || m.request === "resume")) {
          const ws = this.ws;
          this.retryTimer = setTimeout(() => {
            this.retryTimer = null;
            if (ws === this.ws) this.sendIdentify();
          }, backoffDelay(this.attempts++, this.opts.backoff));
        }
        return;
      case "unknown":
        /* a newer node's op: ignored, and said (the protocol grows compatibly) */
        return this.protocolError(`unknown op "${m.name}"`);
    }
  }

  private dispatch(type: string, data: Record<string, unknown>): void {
    const bad = checkEventData(type, data);
    if (bad) return this.protocolError(bad);
    switch (type) {
      case "run.updated": {
        const doc = data as RunDocument;
        const seen = this.runs.get(doc.run);
        if (seen && seen.version >= doc.version) return;
        /* a long-lived page sees runs without end: keep the newest, drop the least recently updated */
        this.runs.delete(doc.run);
        this.runs.set(doc.run, doc);
        if (this.runs.size > (this.opts.maxRuns ?? 1000)) this.runs.delete(this.runs.keys().next().value as string);
        this.emit("run", doc);
        break;
      }
      case "typing.started": this.emit("typing", data as unknown as TypingStarted); break;
      case "agent.presence_changed": this.emit("agent_presence", data as unknown as AgentPresence); break;
      case "notification.created": this.emit("notification", data as unknown as NotificationHint); break;
      case "agent.event": this.emit("agent_event", data as unknown as AgentEvent); break;
      case "command.autocomplete_requested": this.emit("autocomplete_request", data as unknown as AutocompleteRequest); break;
    }
    if (this.has("event")) this.emit("event", { type, data });
  }

  private onReady(ready: Ready): void {
    if (this.state !== "connecting") return this.protocolError("ready twice");
    const resumed = this.op === "resume";
    this.ready = ready;
    this.kind = ready.acked === undefined ? "person" : "agent";
    this.resumeToken = ready.resume;
    this.readyAt = this.lastSent = this.lastTick = Date.now();
    this.setState("connected", 0, "ready");
    /* what this device is doing, again: a new connection starts without it */
    if (this.kind === "person") {
      if (this.focusThread !== null) this.send({ op: "focus", thread: this.focusThread });
      if (this.isIdle) this.send({ op: "idle", idle: true });
    } else if (this.agentState) {
      this.send({ op: "heartbeat", state: this.agentState });
    }
    this.startTick(ready.heartbeat_ms);
    this.emit("ready", { ...ready, resumed });
  }

  /* The tick: the heartbeat at heartbeat_ms, and the stall of a client
   * that stopped running (a suspended tab), which makes a following 1006 a
   * 4008.  A message only sets a flag (no clock read per message,
   * bench/client_dispatch); the tick that finds it knows the message came
   * after the tick before, and the silence timer is armed from there: a
   * dead connection is given up 2 x heartbeat_ms + 1 s after the earliest
   * time its last message can have come, so between 2 x heartbeat_ms and
   * 2 x heartbeat_ms + 1 s of silence (docs/client.md, "Reconnecting"). */
  private startTick(heartbeatMs: number): void {
    this.stopTimers();
    this.silenceMs = 2 * heartbeatMs + TICK_MS;
    this.heard = false;                 /* the ready: its time is known exactly */
    this.armSilence(this.lastTick);
    this.tickTimer = setInterval(() => {
      const now = Date.now();
      const before = this.lastTick;
      if (now - before > STALL_MS + TICK_MS) this.stalledUntil = now + STALL_MS + TICK_MS;
      this.lastTick = now;
      if (this.heard) {
        this.heard = false;
        this.armSilence(before);
      }
      if (now - this.lastSent >= heartbeatMs - TICK_MS / 2) this.send({ op: "heartbeat" });
    }, TICK_MS);
  }

  private armSilence(from: number): void {
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceDue = from + this.silenceMs;
    this.silenceTimer = setTimeout(() => this.silent(), Math.max(0, this.silenceDue - Date.now()));
  }

  private silent(): void {
    this.silenceTimer = null;
    /* heard since the last tick: the next tick arms it again */
    if (this.heard) return;
    /* this timer ran late: the client did not run (a stall), and its socket
     * may hold messages not read yet; look again once they are */
    if (Date.now() - this.silenceDue > STALL_MS) return this.armSilence(Date.now() + TICK_MS - this.silenceMs);
    this.abandonSilently();
  }

  private stopTimers(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.retryTimer = this.tickTimer = this.silenceTimer = null;
  }

  private protocolError(message: string): void {
    this.emit("error", { kind: "protocol", message });
  }

  /* A node's message the client cannot read: said, the connection given
   * up, and a reconnect after the back-off, never at once. */
  private abandon(why: string): void {
    this.protocolError(why);
    if (this.ws) discard(this.ws, 4000, "protocol error");
    this.ws = null;
    this.readyAt = 0;
    this.afterClose(4000, "resume", false, "protocol", "protocol error");
  }

  private abandonSilently(): void {
    if (this.ws) discard(this.ws, 4000, "no answer");
    this.ws = null;
    this.dropped(1006, "");
  }

  private dropped(code: number, reasonText: string): void {
    this.ws = null;
    const stalled = Date.now() < this.stalledUntil;
    const decision = decideClose(code, { op: this.op, reasonText, stalled });
    this.afterClose(code, decision.action, decision.now, decision.reason, reasonText);
  }

  private afterClose(code: number, action: "resume" | "identify" | "final", now: boolean,
    reason: StateChange["reason"], reasonText: string): void {
    this.stopTimers();
    this.settlePending();
    this.emit("close", { code, reason: reasonText, action });
    if (action === "final") {
      this.releaseHooks();
      return this.setState("disconnected", code, reason);
    }
    if (action === "identify") this.resumeToken = null;
    if (this.readyAt && Date.now() - this.readyAt >= HEALTHY_MS) this.attempts = 0;
    this.readyAt = 0;
    this.setState("connecting", code, reason);
    this.retry(now && this.attempts === 0);
  }

  private releaseHooks(): void {
    for (const f of this.unhook.splice(0)) f();
  }

  private retry(now: boolean): void {
    const delay = now ? 0 : backoffDelay(this.attempts, this.opts.backoff);
    this.attempts++;
    this.retryTimer = setTimeout(() => this.dial(), delay);
  }

  /* "online" after an outage: the wait is over */
  private wake(): void {
    if (this.state === "connecting" && this.retryTimer && !this.ws) {
      clearTimeout(this.retryTimer);
      this.dial();
    }
  }

  private settlePending(): void {
    for (const resolve of this.pending.values()) resolve([]);
    this.pending.clear();
  }
}

/** Connects a person's device or an agent consumer (docs/client.md). */
export function connect(opts: ConnectOptions): Client {
  return new Client(opts).open();
}
