import { createHash, createHmac } from "node:crypto";
import { stableStringify, type JsonValue } from "@vigil/trace";

/**
 * The hashing of the audit chain (audit-chain.ts): how a record is encoded and linked to the one
 * before it, the head of the chain kept in `meta`, the check that recognizes the chain's key, and
 * the digest of a run's state that records commit to. It knows no database, so the store (which
 * checks the key when it opens one, before any record is read) and the log (which appends and
 * verifies records in the store) both build on it without either depending on the other.
 */

/** Plain SHA-256, or HMAC-SHA-256 with the chain's key (`VIGIL_AUDIT_KEY`); a database keeps the one it was created with. */
export type ChainAlgorithm = "sha256" | "hmac-sha256";

/** The hash of a run's monitor state as stored (the `runs.state` text), which audit records commit to. */
export function stateDigest(stateText: string): string {
  return createHash("sha256").update(stateText).digest("hex");
}

/** The previous hash of the first record. */
export const GENESIS_HASH = "0".repeat(64);

/** The row as stored: every column the hash covers, and the two hashes. */
export interface AuditRow {
  seq: number;
  time: string;
  run_id: string;
  kind: string;
  outcome: string;
  policy_hash: string | null;
  call_id: string | null;
  body: string;
  prev_hash: string;
  hash: string;
  /** The SHA-256 of the run's stored monitor state after the record; NULL in records written before schema version 2. */
  state_hash: string | null;
}

/**
 * The canonical encoding of a record: its fields as JSON with sorted keys and no white space (the
 * body as a value, so that only a change of meaning changes it), with a version tag.
 *
 * Version 2 is a record that commits to its run's monitor state (`state`, the SHA-256 of the
 * stored state after the record): editing the state is then seen against the chain, and removing
 * or changing the commitment breaks the record's hash. A record without one keeps exactly the
 * version-1 encoding it was written with, so logs written before still verify.
 */
export function canonicalRecord(row: Omit<AuditRow, "prev_hash" | "hash" | "body" | "state_hash"> & { readonly state_hash?: string | null }, body: JsonValue): string {
  const fields = {
    seq: row.seq,
    time: row.time,
    run: row.run_id,
    kind: row.kind,
    outcome: row.outcome,
    policy: row.policy_hash,
    call: row.call_id,
    body,
  };
  return row.state_hash === undefined || row.state_hash === null ? stableStringify({ v: 1, ...fields }) : stableStringify({ v: 2, ...fields, state: row.state_hash });
}

/** The hash of a record: over the previous hash and the record's canonical encoding. */
export function linkHash(algorithm: ChainAlgorithm, key: string | undefined, prevHash: string, canonical: string): string {
  const hash = algorithm === "hmac-sha256" ? createHmac("sha256", requireKey(key)) : createHash("sha256");
  return hash.update(prevHash).update("\n").update(canonical).digest("hex");
}

/** What is stored to recognize the key of a keyed log, without revealing it. */
export function chainKeyCheck(key: string): string {
  return createHmac("sha256", key).update("vigil audit key check").digest("hex");
}

/** The head of the chain, kept in `meta` (and MACed with the key), so that removing records from the end is seen. */
export function headValue(algorithm: ChainAlgorithm, key: string | undefined, seq: number, hash: string): string {
  const head = `${seq}:${hash}`;
  return algorithm === "hmac-sha256" ? `${head}:${createHmac("sha256", requireKey(key)).update(`head:${head}`).digest("hex")}` : head;
}

function requireKey(key: string | undefined): string {
  if (key === undefined) throw new Error("the audit log is keyed, and no key was given");
  return key;
}
