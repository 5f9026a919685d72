/*
 * terminal.ts: a person's terminal session on a host (docs/terminal.md,
 * docs/protocol.md "Terminal streams", docs/host.md "The stream's
 * frames").  Opened or attached through REST, then one device stream at a
 * time: identify with the grant's single-use token, waiting, paired, then
 * the frames.  The stream ID and the offset after the last byte handed to
 * the application are kept across drops, so an attach again resumes
 * exactly there: every byte once, and a "skipped" event with the exact
 * count when the host's ring no longer held them.  The 4102 rules: a
 * stream that paired before attaches again; a session whose stream never
 * paired is ended (DELETE) and reported failed.  detach() keeps the
 * session ID, stream and offset: attach(session.session) takes the same
 * shell up where the screen stopped.  Each open, attach, detach and end
 * starts a new turn; work of an older turn (a grant still on its way, an
 * attaching again) stops when it sees the turn has changed.
 */

import { backoffDelay, checkBackoff, type BackoffOptions } from "./backoff.js";
import { Emitter } from "./emitter.js";
import { decodeHostFrame, encodeInput, encodeResize, encodeResume, FrameError } from "./frames.js";
import {
  attachTerminalSession, endTerminalSession, openTerminalSession, resolveUrl, RestError,
  type RestOptions, type TerminalGrant,
} from "./rest.js";
import { discard, OPEN, webSocketClass, wire, type WebSocketConstructor, type WebSocketLike } from "./transport.js";

export type TerminalState = "opening" | "waiting" | "attached" | "reattaching" | "detached" | "ended" | "failed";

export interface TerminalEvents {
  state: { state: TerminalState; code: number; reason: string };
  /** the host's begin: where the output that follows starts; newStream: another shell than the one shown (a new screen) */
  begin: { stream: bigint; offset: number; skipped: number; newStream: boolean };
  /** bytes of the same shell the device never receives (docs/host.md, "N bytes skipped") */
  skipped: { count: number; offset: number };
  output: { bytes: Uint8Array; offset: number };
  error: { kind: "protocol" | "rest"; message: string };
  /** a stream was identified and paired: attaches counts the attaches again so far */
  paired: { attaches: number };
}

export interface TerminalOptions extends RestOptions {
  WebSocket?: WebSocketConstructor;
  backoff?: BackoffOptions;
  /** how long attaching again goes on before the session is reported failed (default 120000 ms) */
  attachForMs?: number;
}

const SUBPROTOCOL = "bothy-terminal-stream";
const utf8 = new TextEncoder();

export class TerminalSession extends Emitter<TerminalEvents> {
  state: TerminalState = "opening";
  session: string | null = null;
  /** the shell's stream ID (0n: none shown yet) */
  stream = 0n;
  /** the offset after the last byte handed to the application */
  offset = 0;
  /** attaches again after a drop, so far */
  attaches = 0;
  private everPaired = false;
  private paired = false;
  private lastClose = 0;
  private size: [number, number] | null = null;
  private ws: WebSocketLike | null = null;
  /* the turn whose attaching again runs (-1: none); an older turn's loop may still sleep */
  private attaching = -1;
  private turn = 0;
  private readonly WS: WebSocketConstructor;

  constructor(private readonly opts: TerminalOptions) {
    super();
    checkBackoff(opts.backoff ?? {});
    this.WS = webSocketClass(opts.WebSocket);
  }

  /** A new session on the host (a session this object held is detached first); resolves once
   * the grant is in hand and the stream is being opened (state opening: "paired" follows). */
  async open(host: string): Promise<this> {
    this.stream = 0n;
    this.offset = 0;
    return this.first("open", () => openTerminalSession(this.opts, host));
  }

  /** Attaches to a detached session of the person (another device's, one left before a reload, or
   * this object's own after detach()); resolves as open() does. */
  async attach(session: string): Promise<this> {
    /* detached here a moment ago: the cluster may not have seen the stream's close yet */
    const own = this.state === "detached" && session === this.session;
    return this.first("attach", own ? (turn) => this.attachOwn(session, turn) : () => attachTerminalSession(this.opts, session));
  }

  /* The first grant: a refusal is the state failed (its code as the reason) and the RestError thrown.
   * A session held until now is left detached: its stream closed, its attaching again stopped. */
  private async first(how: string, call: (turn: number) => Promise<TerminalGrant>): Promise<this> {
    const turn = this.newTurn();
    this.session = null;
    this.attaches = 0;
    this.everPaired = false;
    this.setState("opening", 0, how);
    let grant: TerminalGrant;
    try {
      grant = await call(turn);
    } catch (err) {
      if (turn !== this.turn) throw err;
      this.restError(err);
      this.setState("failed", 0, err instanceof RestError ? err.code || "http_" + err.status : "unreachable");
      throw err;
    }
    /* detached, ended or opened again meanwhile: the session is left detached (attach() takes it) */
    if (turn !== this.turn) {
      if (this.state === "detached" && this.session === null) this.session = grant.session;
      return this;
    }
    this.session = grant.session;
    this.connect(grant);
    return this;
  }

  /* The attach of a session this object detached: 409 not_detached is the
   * cluster not having seen the close yet, tried again with the back-off
   * until attachForMs, as attaching again after a drop does. */
  private async attachOwn(session: string, turn: number): Promise<TerminalGrant> {
    const until = Date.now() + (this.opts.attachForMs ?? 120000);
    for (let attempt = 0; ; attempt++) {
      try {
        return await attachTerminalSession(this.opts, session);
      } catch (err) {
        if (!(err instanceof RestError && err.code === "not_detached") || Date.now() >= until || turn !== this.turn) throw err;
      }
      await new Promise((f) => setTimeout(f, backoffDelay(attempt, this.opts.backoff)));
    }
  }

  /** Keystrokes or a paste: input frames, only while paired (else false). */
  input(data: string | Uint8Array): boolean {
    if (!this.paired || !this.ws || this.ws.readyState !== OPEN) return false;
    for (const f of encodeInput(typeof data === "string" ? utf8.encode(data) : data)) this.ws.send(f);
    return true;
  }

  /** The window size; kept and sent again at every pairing. */
  resize(rows: number, cols: number): void {
    const frame = encodeResize(rows, cols);
    this.size = [rows, cols];
    if (this.paired && this.ws && this.ws.readyState === OPEN) this.ws.send(frame);
  }

  /** Leaves the session detached (its shell goes on), keeping session, stream and offset:
   * attach(this.session) takes it up again, from here or another device. */
  detach(): void {
    if (this.state === "detached" || this.state === "ended" || this.state === "failed") return;
    this.newTurn();
    this.setState("detached", 0, "detached");
  }

  /** Ends the session (DELETE): its shell is hung up. keepalive: for a page that goes away. */
  async end(keepalive = false): Promise<void> {
    const session = this.session;
    this.newTurn();
    this.session = null;
    if (this.state !== "failed") this.setState("ended", 0, "closed_by_device");
    if (session) await endTerminalSession(this.opts, session, keepalive);
  }

  /* --- the stream --------------------------------------------------------- */

  private setState(state: TerminalState, code: number, reason: string): void {
    this.state = state;
    this.emit("state", { state, code, reason });
  }

  /* The stream closed and the work of the turn before stopped; returns the new turn. */
  private newTurn(): number {
    if (this.ws) discard(this.ws, 1000, "");
    this.ws = null;
    this.paired = false;
    return ++this.turn;
  }

  private restError(err: unknown): void {
    this.emit("error", { kind: "rest", message: err instanceof Error ? err.message : String(err) });
  }

  private connect(grant: TerminalGrant): void {
    const url = resolveUrl(grant.stream, this.opts.base);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const ws = new this.WS(url.href, SUBPROTOCOL);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.paired = false;
    ws.onmessage = (ev) => {
      if (ws !== this.ws) return;
      if (typeof ev.data === "string") this.control(ev.data);
      else if (ev.data instanceof ArrayBuffer) this.frame(ev.data);
      else this.protocolError("a binary message that is not an ArrayBuffer");
    };
    wire(ws, () => ws.send(JSON.stringify({ op: "identify", side: "device", token: grant.token })), (code) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.paired = false;
      this.closed(code);
    });
  }

  private protocolError(message: string): void {
    this.emit("error", { kind: "protocol", message });
  }

  private control(text: string): void {
    let op: unknown;
    try {
      op = (JSON.parse(text) as { op?: unknown }).op;
    } catch {
      return this.protocolError("a text message that is not JSON");
    }
    if (op === "waiting") {
      this.paired = false;
      this.setState("waiting", 0, "waiting");
    } else if (op === "paired") {
      if (this.paired) return this.protocolError("paired twice");
      this.paired = true;
      this.everPaired = true;
      /* resume first, once per pairing: the stream and the offset shown */
      this.ws?.send(encodeResume(this.stream, this.offset));
      if (this.size) this.ws?.send(encodeResize(this.size[0], this.size[1]));
      this.setState("attached", 0, "paired");
      this.emit("paired", { attaches: this.attaches });
    } else {
      this.protocolError(`an unknown stream message "${String(op)}"`);
    }
  }

  private frame(buf: ArrayBuffer): void {
    if (!this.paired) return this.protocolError("a frame before paired");
    let f;
    try {
      f = decodeHostFrame(buf);
    } catch (err) {
      return this.protocolError((err as FrameError).message);
    }
    if (f.type === "begin") {
      const newStream = f.stream !== this.stream;
      this.stream = f.stream;
      if (!newStream && f.offset !== this.offset + f.skipped)
        this.protocolError("a begin whose skipped count does not match the offset");
      this.offset = f.offset;
      this.emit("begin", { stream: f.stream, offset: f.offset, skipped: f.skipped, newStream });
      if (!newStream && f.skipped > 0) this.emit("skipped", { count: f.skipped, offset: f.offset });
      return;
    }
    if (f.offset + f.bytes.length <= this.offset) return;      /* never a byte twice */
    if (f.offset > this.offset) return this.protocolError(`output at ${f.offset}, ${this.offset} expected`);
    const bytes = f.bytes.subarray(this.offset - f.offset);
    const at = this.offset;
    this.offset += bytes.length;
    this.emit("output", { bytes, offset: at });
  }

  private closed(code: number): void {
    this.lastClose = code;
    if (code === 1000) {
      this.session = null;
      return this.setState("ended", code, "session_ended");
    }
    if (code === 4002) return this.setState("failed", code, "protocol_error");
    void this.reattach();
  }

  /* The stream dropped and the session did not end: a fresh grant (the
   * token is single use), tried with the back-off until attachForMs. */
  private async reattach(): Promise<void> {
    const turn = this.turn;
    if (this.attaching === turn || !this.session) return;
    this.attaching = turn;
    const session = this.session;
    const until = Date.now() + (this.opts.attachForMs ?? 120000);
    this.setState("reattaching", this.lastClose, "stream_lost");
    try {
      for (let attempt = 0; this.turn === turn && Date.now() < until; attempt++) {
        await new Promise((f) => setTimeout(f, backoffDelay(attempt, this.opts.backoff)));
        if (this.turn !== turn) return;
        let grant: TerminalGrant;
        try {
          grant = await attachTerminalSession(this.opts, session);
        } catch (err) {
          if (this.turn !== turn) return;
          const status = err instanceof RestError ? err.status : 0;
          if (status === 401 || status === 403) {
            this.session = null;
            return this.setState("ended", this.lastClose, "forbidden");
          }
          if (status === 409 && this.lastClose === 4102 && !this.everPaired) {
            /* never paired: the host did not come in time; end it, no shell left behind (docs/protocol.md, 4102) */
            this.session = null;
            await endTerminalSession(this.opts, session).catch((e: unknown) => this.restError(e));
            return this.setState("failed", 4102, "host_timeout");
          }
          continue;           /* not_detached yet, host_unavailable, 503, the network */
        }
        if (this.turn !== turn) return;
        this.attaches++;
        this.connect(grant);
        return;
      }
      if (this.turn === turn) this.setState("failed", this.lastClose, "attach_timeout");
    } finally {
      if (this.attaching === turn) this.attaching = -1;
    }
  }
}

/** Opens a new terminal session on a host (docs/client.md, "A terminal pane"). */
export function openTerminal(opts: TerminalOptions, host: string): Promise<TerminalSession> {
  return new TerminalSession(opts).open(host);
}
