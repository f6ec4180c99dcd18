/**
 * Stands in, in the built bundles only (scripts/build.mjs aliases `@noble/hashes/crypto` to it), for
 * @noble/hashes' reference to `globalThis.crypto`: reading that global makes Node load its whole
 * crypto module (~4 ms of every command's start-up), and jp uses @noble/hashes for SHA-256 alone,
 * which needs no randomness. Contract: nothing in jp calls @noble/hashes' randomBytes, which would
 * throw here.
 */
export const crypto: undefined = undefined;
