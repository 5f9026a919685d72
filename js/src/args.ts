/*
 * args.ts: what the ops of docs/protocol.md take, checked before anything
 * is sent.  A node closes a connection with 4002 for a member outside its
 * limits; focus and idle are sent again after every reconnect, so one bad
 * value kept would close every later connection too.  A bad argument is
 * therefore a TypeError or RangeError at the call, and nothing is kept.
 */

/* protocol.md, "Conventions": the canonical lower-case 8-4-4-4-12 form */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isUuid(v: unknown): v is string {
  return typeof v === "string" && UUID.test(v);
}

export function checkUuid(what: string, v: unknown): void {
  if (!isUuid(v)) throw new TypeError(`${what} must be a UUID in lower-case 8-4-4-4-12 form`);
}

/* autocomplete's query: 0 to 1024 bytes of UTF-8 (protocol.md, "autocomplete") */
const QUERY_MAX_BYTES = 1024;
/* autocomplete_answer's items: at most 50 JSON objects */
const ITEMS_MAX = 50;

export function checkQuery(v: unknown): void {
  if (typeof v !== "string") throw new TypeError("query must be a string");
  if (new TextEncoder().encode(v).length > QUERY_MAX_BYTES)
    throw new RangeError(`query must be at most ${QUERY_MAX_BYTES} bytes of UTF-8`);
}

export function checkItems(v: unknown): void {
  if (!Array.isArray(v)) throw new TypeError("items must be an array");
  if (v.length > ITEMS_MAX) throw new RangeError(`items must hold at most ${ITEMS_MAX} objects`);
  for (const item of v)
    if (item === null || typeof item !== "object" || Array.isArray(item))
      throw new TypeError("each item must be a JSON object");
}
