// backoff.test.mjs: the reconnect delay (src/backoff.ts): full jitter
// between the floor and min * 2^n, capped at max.
import { test } from "node:test";
import assert from "node:assert/strict";
import { backoffDelay, BACKOFF_MIN_MS, BACKOFF_MAX_MS } from "../../dist/index.js";

test("attempt 0 waits the floor, whatever the jitter", () => {
  for (const r of [0, 0.5, 0.999]) assert.equal(backoffDelay(0, {}, () => r), BACKOFF_MIN_MS);
});

test("full jitter: attempt n spans [min, min * 2^n]", () => {
  const o = { minMs: 100, maxMs: 100000 };
  for (let n = 1; n <= 6; n++) {
    assert.equal(backoffDelay(n, o, () => 0), 100);
    assert.equal(backoffDelay(n, o, () => 1), 100 * 2 ** n);
    assert.equal(backoffDelay(n, o, () => 0.5), Math.round(100 + 0.5 * (100 * 2 ** n - 100)));
  }
});

test("capped at maxMs however many attempts", () => {
  for (const n of [10, 30, 1000, Infinity]) assert.equal(backoffDelay(n, {}, () => 1), BACKOFF_MAX_MS);
  assert.equal(backoffDelay(50, { minMs: 200, maxMs: 1000 }, () => 1), 1000);
});

test("the platform's random spreads the delays over the whole window", () => {
  const seen = Array.from({ length: 2000 }, () => backoffDelay(4, { minMs: 100, maxMs: 100000 }));
  assert.ok(seen.every((d) => d >= 100 && d <= 1600));
  assert.ok(Math.min(...seen) < 250 && Math.max(...seen) > 1450, "uniform over [100, 1600]");
});

test("bad options are refused at connect, with a clear error", async () => {
  const { connect } = await import("../../dist/index.js");
  const base = { url: "ws://127.0.0.1:9/gateway", token: "t", WebSocket: class {} };
  assert.throws(() => connect({ ...base, backoff: { minMs: 0 } }), /backoff.minMs/);
  assert.throws(() => connect({ ...base, backoff: { minMs: 500, maxMs: 100 } }), /backoff.maxMs/);
  assert.throws(() => connect({ ...base, url: "http://x/gateway" }), /ws:\/\//);
  assert.throws(() => connect({ ...base, token: "a b" }), /printable ASCII/);
  assert.throws(() => connect({ ...base, typingIntervalMs: -1 }), /typingIntervalMs/);
});
