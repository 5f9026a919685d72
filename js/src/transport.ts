/*
 * transport.ts: the WebSocket the package speaks through.  The platform's
 * (browsers, Node 22 and later, Node 20 with --experimental-websocket), or
 * a constructor the application passes: the `ws` package is the optional
 * peer for an older Node (docs/client.md, "Install").  Only the WHATWG
 * surface below is used, which both provide.
 */

export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string | ArrayBuffer | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

export const OPEN = 1;

export function webSocketClass(given?: WebSocketConstructor): WebSocketConstructor {
  const found = given ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (typeof found !== "function")
    throw new TypeError("no WebSocket on this platform: pass options.WebSocket (the ws package on Node before 22)");
  return found;
}

/** Joins the socket's open to onOpen, and its end to onEnd, once: its close, or an error before
 * it opened.  Every close before open is a 1006, and Node 20's experimental WebSocket fires only
 * error, no close, when the connection is refused: a list of nodes with one down would hang. */
export function wire(ws: WebSocketLike, onOpen: () => void, onEnd: (code: number, reason: string) => void): void {
  let opened = false;
  ws.onopen = () => {
    opened = true;
    onOpen();
  };
  ws.onclose = (ev) => onEnd(ev.code, ev.reason);
  ws.onerror = () => {
    if (opened) return;               /* the close follows */
    discard(ws, 1000, "");
    onEnd(1006, "");
  };
}

/** Drops every handler, then closes: the socket's later events reach nobody.  The error handler
 * stays a no-op: the ws package emits an aborted handshake as an error, fatal with no listener. */
export function discard(ws: WebSocketLike, code: number, reason: string): void {
  ws.onopen = ws.onmessage = ws.onclose = null;
  ws.onerror = () => {};
  try {
    ws.close(code, reason);
  } catch {
    /* closed already, or still connecting on an old platform */
  }
}
