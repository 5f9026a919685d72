/*
 * platform.ts: what a browser tells a client about its network and its
 * page, where the platform has it (nothing in Node): "online" ends a
 * back-off wait at once, and page visibility is the person's idle state
 * (docs/protocol.md, `idle`).  Each hook returns the function that undoes
 * it.
 */

type Target = { addEventListener(t: string, f: () => void): void; removeEventListener(t: string, f: () => void): void };

export function onOnline(fn: () => void): () => void {
  const g = globalThis as Partial<Target>;
  if (typeof g.addEventListener !== "function" || typeof g.removeEventListener !== "function") return () => {};
  g.addEventListener("online", fn);
  return () => g.removeEventListener?.("online", fn);
}

export function onVisibility(fn: (hidden: boolean) => void): () => void {
  const doc = (globalThis as { document?: Target & { hidden: boolean } }).document;
  if (!doc) return () => {};
  const handler = () => fn(doc.hidden);
  doc.addEventListener("visibilitychange", handler);
  return () => doc.removeEventListener("visibilitychange", handler);
}

export function pageHidden(): boolean {
  const doc = (globalThis as { document?: { hidden: boolean } }).document;
  return doc ? doc.hidden : false;
}
