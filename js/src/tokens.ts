/*
 * tokens.ts: what a bothy1 token says about itself (docs/tokens.md,
 * "Format"): its payload, read without verifying the signature.  For a
 * client to know whose token it holds (the person and device of a pane,
 * the expiry to renew before); only a node's verification decides what the
 * token is worth.
 */

export interface TokenClaims {
  kind: "person-device" | "agent" | "resume" | "terminal";
  exp: number;
  person?: string;
  device?: string;
  agent?: string;
  session?: string;
}

const KINDS = new Set(["person-device", "agent", "resume", "terminal"]);

/** The payload of a token of the form bothy1.<key ID>.<payload>.<signature>, or null when it is not one. */
export function readToken(token: string): TokenClaims | null {
  const parts = typeof token === "string" ? token.split(".") : [];
  if (parts.length !== 4 || parts[0] !== "bothy1" || !/^[A-Za-z0-9_-]+$/.test(parts[2] ?? "")) return null;
  try {
    const b64 = parts[2]!.replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4))) as TokenClaims;
    return claims && typeof claims === "object" && KINDS.has(claims.kind) && Number.isSafeInteger(claims.exp) ? claims : null;
  } catch {
    return null;
  }
}
