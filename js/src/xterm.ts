/*
 * xterm.ts: the entry point @bothy/client/xterm, which joins a
 * TerminalSession to an xterm.js Terminal (@xterm/xterm, a peer
 * dependency: only its shape is used here, so the core never loads it).
 * Keystrokes and pastes become input, the terminal's size resize, the
 * output is written, a begin of another shell resets the screen and a
 * skip is shown as a marker line.
 */

import type { TerminalSession } from "./terminal.js";

/** The part of @xterm/xterm's Terminal the adapter uses. */
export interface XtermLike {
  readonly rows: number;
  readonly cols: number;
  write(data: string | Uint8Array): void;
  reset(): void;
  onData(fn: (data: string) => void): { dispose(): void };
  onBinary(fn: (data: string) => void): { dispose(): void };
  onResize(fn: (size: { rows: number; cols: number }) => void): { dispose(): void };
}

export interface XtermOptions {
  /** the marker line for skipped bytes (default: "[N bytes skipped]" in reverse video) */
  skippedText?: (count: number) => string;
}

/** Connects term and session both ways; returns the function that undoes it. */
export function attachXterm(term: XtermLike, session: TerminalSession, opts: XtermOptions = {}): () => void {
  const marker = opts.skippedText ?? ((n: number) => `\r\n\x1b[7m[${n} bytes skipped]\x1b[0m\r\n`);
  const undo: Array<() => void> = [];
  const d1 = term.onData((d) => session.input(d));
  const d2 = term.onBinary((d) => session.input(Uint8Array.from(d, (c) => c.charCodeAt(0) & 255)));
  const d3 = term.onResize(({ rows, cols }) => session.resize(rows, cols));
  undo.push(() => d1.dispose(), () => d2.dispose(), () => d3.dispose());
  let shown = session.stream;
  undo.push(session.on("begin", (b) => {
    /* another shell than the one on the screen: a new screen */
    if (b.newStream && shown !== 0n) term.reset();
    shown = b.stream;
  }));
  undo.push(session.on("skipped", (s) => term.write(marker(s.count))));
  undo.push(session.on("output", (o) => term.write(o.bytes.slice())));
  session.resize(term.rows, term.cols);
  return () => { for (const f of undo.splice(0)) f(); };
}
