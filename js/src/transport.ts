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

/** Drops every handler, then closes: the socket's later events reach nobody. */
export function discard(ws: WebSocketLike, code: number, reason: string): void {
  ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
  try {
    ws.close(code, reason);
  } catch {
    /* closed already, or still connecting on an old platform */
  }
}
