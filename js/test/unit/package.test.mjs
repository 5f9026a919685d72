// package.test.mjs: what the package promises as a package: tsc --noEmit
// in strict mode over src/, the core at most 10 KB minified and gzipped
// (esbuild + zlib, the way a bundler would ship it), and the tarball of
// npm pack with its README, licence (the PostgreSQL Licence), version
// (the version export's too), type declarations and both entry points
// (and nothing of src/ or test/).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = new URL("../..", import.meta.url).pathname;
const CORE_BUDGET = 10 * 1024;

test("the version export is package.json's version", async () => {
  const { version } = await import("../../dist/index.js");
  assert.equal(version, JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version);
});

test("tsc --noEmit, strict, passes over src/", () => {
  const cfg = JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8"));
  assert.equal(cfg.compilerOptions.strict, true);
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", root], { stdio: "pipe" });
});

test(`the core (the . entry point) is at most ${CORE_BUDGET} bytes minified and gzipped`, async () => {
  const r = await build({ entryPoints: [join(root, "src/index.ts")], bundle: true, minify: true, format: "esm",
    target: "es2020", write: false, logLevel: "error" });
  const min = r.outputFiles[0].contents;
  const gz = gzipSync(min, { level: 9 }).length;
  console.log(`core: ${min.length} bytes minified, ${gz} bytes gzipped (budget ${CORE_BUDGET})`);
  assert.ok(gz <= CORE_BUDGET, `${gz} bytes gzipped`);
  assert.ok(!/@xterm/.test(new TextDecoder().decode(min)), "the core holds nothing of xterm.js");
});

test("npm pack: README, LICENSE, the type declarations and both entry points", () => {
  const dir = mkdtempSync(join(tmpdir(), "bothy-pack-"));
  try {
    const out = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", dir, "--ignore-scripts"],
      { cwd: root, encoding: "utf8", env: { ...process.env, npm_config_loglevel: "error" } }));
    const tarball = join(dir, out[0].filename);
    const files = execFileSync("tar", ["tzf", tarball], { encoding: "utf8" }).trim().split("\n").map((f) => f.replace(/^package\//, ""));
    for (const f of ["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.d.ts", "dist/xterm.js",
      "dist/xterm.d.ts", "dist/client.d.ts", "dist/terminal.d.ts"])
      assert.ok(files.includes(f), `${f} in the tarball`);
    assert.deepEqual(files.filter((f) => /^(src|test|scripts|node_modules)\//.test(f)), []);
    const pkg = JSON.parse(execFileSync("tar", ["xzOf", tarball, "package/package.json"], { encoding: "utf8" }));
    assert.deepEqual(pkg.dependencies ?? {}, {}, "no runtime dependency");
    assert.equal(pkg.peerDependenciesMeta["@xterm/xterm"].optional, true);
    assert.equal(pkg.peerDependenciesMeta.ws.optional, true);
    assert.equal(pkg.exports["./xterm"].types, "./dist/xterm.d.ts");
    /* the PostgreSQL Licence, as the whole repository (SPDX "PostgreSQL"), and the release's version */
    assert.equal(pkg.license, "PostgreSQL");
    assert.equal(pkg.version, "0.3.0");
    const licence = execFileSync("tar", ["xzOf", tarball, "package/LICENSE"], { encoding: "utf8" });
    assert.match(licence, /^PostgreSQL Licence\n\nCopyright \(c\) 2026, the bothy developers\n/);
    assert.match(licence, /NO OBLIGATIONS TO PROVIDE MAINTENANCE, SUPPORT,\nUPDATES, ENHANCEMENTS, OR MODIFICATIONS\.\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
