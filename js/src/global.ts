/*
 * global.ts: what the script-tag bundle (dist/bothy-client.global.js, the
 * global `bothy`) holds: the core and the xterm.js adapter, for a page
 * without a bundler, such as the demo's.
 */

export * from "./index.js";
export { attachXterm } from "./xterm.js";
export type { XtermLike, XtermOptions } from "./xterm.js";
