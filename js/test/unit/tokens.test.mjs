// tokens.test.mjs: readToken (src/tokens.ts) reads a token's payload as
// docs/tokens.md prints it, and answers null for anything that is not a
// bothy1 token of a known kind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readToken } from "../../dist/index.js";

const token = (payload) => `bothy1.20261203-134441-281-48fc092e.${Buffer.from(payload).toString("base64url")}.c2ln`;

test("the payload of docs/tokens.md's person-device example", () => {
  const p = '{"kind":"person-device","person":"3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b","device":"7c1d2e3f-8a9b-4c0d-9e1f-2a3b4c5d6e7f","exp":1796391889}';
  assert.deepEqual(readToken(token(p)), JSON.parse(p));
});

test("not a token: null, never an exception", () => {
  for (const bad of ["", "bothy1", "bothy2.k.e30.c2ln", token('{"kind":"other","exp":1}'), token('{"kind":"agent"}'),
    token("not json"), "bothy1.k.%%%.c2ln", token('{"kind":"agent","exp":1}') + ".x", undefined, 42])
    assert.equal(readToken(bad), null, String(bad));
});
