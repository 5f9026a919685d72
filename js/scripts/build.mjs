// scripts/build.mjs: builds js/dist from js/src.  esbuild makes the two ES
// module entry points (. and ./xterm) and the script-tag bundle the demo
// page loads (dist/bothy-client.global.js: the global `bothy`, both entry
// points in one file); tsc writes the type declarations.  Run by npm run
// build, demo/client-install and the client suite; no output but errors.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
rmSync(dist, { recursive: true, force: true });

const common = { bundle: true, target: "es2020", logLevel: "error", legalComments: "none" };
await build({
  ...common,
  entryPoints: { index: join(root, "src/index.ts"), xterm: join(root, "src/xterm.ts") },
  outdir: dist,
  format: "esm",
  platform: "neutral",
});
await build({
  ...common,
  entryPoints: [join(root, "src/global.ts")],
  outfile: join(dist, "bothy-client.global.js"),
  format: "iife",
  globalName: "bothy",
  minify: true,
});
execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.json")], { stdio: "inherit" });
