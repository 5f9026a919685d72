/*
 * index.ts: the entry point of @bothy/client (docs/client.md): connect()
 * for a person's device or an agent consumer, the REST calls, the terminal
 * session.  The xterm.js adapter is the separate entry point ./xterm.
 */

export { connect, Client } from "./client.js";
export type { ConnectOptions, State, StateChange, ClientEvents, ClientError } from "./client.js";
export { backoffDelay, BACKOFF_MIN_MS, BACKOFF_MAX_MS } from "./backoff.js";
export type { BackoffOptions } from "./backoff.js";
export { decideClose } from "./close-codes.js";
export type { CloseAction, CloseDecision, CloseReason, CloseContext } from "./close-codes.js";
export { parseNodeMessage, ProtocolError } from "./messages.js";
export type {
  Ready, TypingStarted, RunDocument, AgentPresence, NotificationHint, AgentEvent,
  AutocompleteRequest, AutocompleteItem, NodeMessage,
} from "./messages.js";
export {
  RestError, httpBaseOf, presence, agentsPresence, pollAgentEvents,
  terminalHosts, openTerminalSession, attachTerminalSession, endTerminalSession,
} from "./rest.js";
export type { RestOptions, PresenceRow, AgentStatus, AgentEventsPage, TerminalHost, TerminalGrant } from "./rest.js";
export { TerminalSession, openTerminal } from "./terminal.js";
export type { TerminalOptions, TerminalState, TerminalEvents } from "./terminal.js";
export { decodeHostFrame, encodeInput, encodeResize, encodeResume, FrameError, FRAME_MAX } from "./frames.js";
export type { HostFrame } from "./frames.js";
export type { WebSocketLike, WebSocketConstructor } from "./transport.js";
export { readToken } from "./tokens.js";
export { version } from "./version.js";
export type { TokenClaims } from "./tokens.js";
