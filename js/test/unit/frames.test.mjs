// frames.test.mjs: the terminal stream's frames (src/frames.ts) against
// the hex examples of docs/host.md.
import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeHostFrame, encodeInput, encodeResize, encodeResume, FrameError, FRAME_MAX } from "../../dist/index.js";

const hex = (s) => Uint8Array.from(s.replace(/ /g, "").match(/../g) ?? [], (b) => parseInt(b, 16)).buffer;
const toHex = (b) => Buffer.from(b).toString("hex");

test("docs/host.md's examples, both ways", () => {
  assert.equal(toHex(encodeResume(0n, 0)), "72" + "00".repeat(16));
  assert.equal(toHex(encodeResume(0x9c1e55a0d3b7420fn, 2097152)), "729c1e55a0d3b7420f0000000000200000");
  assert.equal(toHex(encodeResize(50, 132)), "7700320084");
  assert.equal(toHex(encodeInput(new TextEncoder().encode("ls\r"))[0]), "696c730d");
  assert.deepEqual(decodeHostFrame(hex("62 9c1e55a0d3b7420f 0000000000400000 0000000000200000")),
    { type: "begin", stream: 0x9c1e55a0d3b7420fn, offset: 4194304, skipped: 2097152 });
  const out = decodeHostFrame(hex("6f 0000000000000000 2420"));
  assert.equal(out.offset, 0);
  assert.equal(Buffer.from(out.bytes).toString(), "$ ");
});

test("input is split into frames of at most 16384 bytes", () => {
  const frames = encodeInput(new Uint8Array(40000).fill(97));
  assert.deepEqual(frames.map((f) => f.byteLength), [FRAME_MAX, FRAME_MAX, 40000 - 2 * (FRAME_MAX - 1) + 1]);
});

test("a host frame of the wrong length or type is a FrameError", () => {
  for (const bad of ["", "62 00", "62" + "00".repeat(25), "6f 0000000000000000", "6f" + "00".repeat(16384), "7a 00",
    "62 0000000000000001 ffffffffffffffff 0000000000000000"])
    assert.throws(() => decodeHostFrame(hex(bad)), FrameError, bad.slice(0, 20));
});

test("resize refuses sizes out of 1 to 4096", () => {
  for (const [r, c] of [[0, 80], [24, 4097], [1.5, 80]]) assert.throws(() => encodeResize(r, c), RangeError);
});
