/*
 * version.ts: the package's version, for an application to log or send
 * along (docs/client.md, "Install").  package.json's "version" is the one
 * npm reads; test/unit/package.test.mjs holds the two equal.
 */

export const version = "0.3.0";
