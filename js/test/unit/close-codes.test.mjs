// close-codes.test.mjs: the close-code table (src/close-codes.ts) row by
// row, as docs/protocol.md ("Close codes") and docs/client.md state it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { decideClose } from "../../dist/index.js";

const rows = [
  // code, context, action, now, reason
  [1001, { op: "resume" }, "resume", true, "node_stopping"],
  [1006, { op: "resume" }, "resume", false, "network"],
  [1006, { op: "resume", stalled: true }, "resume", false, "send_queue_full"],
  [1007, { op: "resume" }, "final", false, "bad_utf8"],
  [1009, { op: "resume" }, "resume", false, "message_too_big"],
  [1011, { op: "identify" }, "resume", false, "internal_error"],
  [4001, { op: "resume" }, "identify", true, "resume_lapsed"],
  [4001, { op: "identify" }, "final", false, "token_refused"],
  [4002, { op: "identify", reasonText: "malformed message" }, "final", false, "protocol_error"],
  [4002, { op: "identify", reasonText: "no identify in time" }, "resume", true, "identify_timeout"],
  [4008, { op: "identify" }, "resume", false, "send_queue_full"],
  [4009, { op: "resume" }, "resume", false, "heartbeat_timeout"],
  [4015, { op: "resume" }, "final", false, "fenced"],
  [4015, { op: "identify" }, "final", false, "fenced"],
  [4017, { op: "resume" }, "final", false, "replaced"],
  [4017, { op: "identify" }, "final", false, "replaced"],
  [1000, { op: "identify" }, "resume", false, "network"],
  [4999, { op: "identify" }, "resume", false, "unknown"],
];

for (const [code, ctx, action, now, reason] of rows) {
  test(`close ${code} ${JSON.stringify(ctx)}: ${action}${now ? " at once" : ""} (${reason})`, () => {
    assert.deepEqual(decideClose(code, ctx), { action, now, reason });
  });
}

test("the table in docs/client.md is this table", async () => {
  const { readFileSync } = await import("node:fs");
  const doc = readFileSync(new URL("../../../docs/client.md", import.meta.url), "utf8");
  const documented = new Map();
  for (const m of doc.matchAll(/^\| `(\d{4})`([^|]*)\| (\w+)( at once)? \| `(\w+)` \|/gm))
    documented.set(m[1] + (m[2].trim() ? " " + m[2].trim() : ""), [m[3], !!m[4], m[5]]);
  assert.ok(documented.size >= 14, "docs/client.md has the close-code table");
  for (const [code, ctx, action, now, reason] of rows) {
    const when = ctx.stalled ? " after a stall" : ctx.reasonText === "no identify in time" ? " no identify in time"
      : code === 4001 ? ` of ${ctx.op}` : "";
    const key = String(code) + when;
    if (!documented.has(key)) continue;
    assert.deepEqual(documented.get(key), [action, now, reason], key);
    documented.delete(key);
  }
  assert.deepEqual([...documented.keys()], [], "every documented row is a row of the table");
});
