// platform-ws.mjs: the WebSocket the tests hand the client: the
// platform's where it has one (browsers, Node 22, Node 20 with
// --experimental-websocket), else the `ws` package, the optional peer
// for an older Node (Debian 12's Node 18 in CI).
import { WebSocket as WsWebSocket } from "ws";

export const PlatformWebSocket = globalThis.WebSocket;
export const WebSocketImpl = PlatformWebSocket ?? WsWebSocket;
export const implName = PlatformWebSocket ? "the platform's WebSocket" : "the ws package";
