import { createHash } from "node:crypto";
import type { CheckedStatement } from "@vigil/compiler";
import { isJsonObject, readRegularFile, type JsonValue } from "@vigil/trace";
import { appendAudit } from "./audit-chain.js";
import { canonicalRecord, linkHash, type AuditRow } from "./audit-hash.js";
import type { Store } from "./store.js";

/**
 * The policy an enforcement point applies: the checked statements of one or more `.vigil` files,
 * and the SHA-256 of their texts, which names the policy in every audit record.
 *
 * Compiling needs the parser (and its parser generator), which takes longer to load than a hook
 * has for a whole decision. So the checked program is stored in the database under the policy's
 * hash the first time it is compiled, and every later process reads it from there: the compiler
 * is loaded only when the texts changed.
 *
 * A stored program is under the audit chain: storing it appends a `policy` record that commits to
 * the program's SHA-256, and a program is read from the database only when that record still
 * vouches for it (its hash holds: with a keyed chain, no one without the key can make one). A
 * program edited in the database (to weaken the policy without touching its files) is compiled
 * again from the files instead, and the record of the new program says what it replaced.
 */
export interface EnforcedPolicy {
  /** SHA-256 (hex) of the policy texts, in the order given. */
  readonly hash: string;
  readonly files: readonly string[];
  readonly statements: readonly CheckedStatement[];
  /** Whether the checked program came from the database rather than a compilation. */
  readonly cached: boolean;
}

/** A policy that cannot be enforced: unreadable, or with errors. Calls are then refused. */
export class PolicyError extends Error {}

/**
 * The version of the stored program's encoding and of the checked IR it encodes. Part of the
 * cache key: a vigilc whose IR differs must not read another's programs.
 */
const PROGRAM_FORMAT = "vigil-checked-program-3";

/**
 * Reads the policy's files and gives its checked program: from the database when a policy of the
 * same texts was compiled before, else compiled (and stored). `known`: the policy this process
 * loaded last, given back as it is when the texts have not changed.
 */
export async function loadPolicy(files: readonly string[], store?: Store, known?: EnforcedPolicy): Promise<EnforcedPolicy> {
  if (files.length === 0) throw new PolicyError("no policy was given (--policy FILE)");
  const texts: string[] = [];
  for (const file of files) {
    const text = await readRegularFile(file, "policy");
    if (typeof text !== "string") throw new PolicyError(text.message);
    texts.push(text);
  }
  const hash = policyHash(texts);
  // The same texts as a policy already loaded (a long-lived process reading its files again): nothing to decode.
  if (known !== undefined && known.hash === hash && known.files.length === files.length && known.files.every((file, index) => file === files[index])) return known;
  const stored = store?.db.prepare("SELECT program, audit_seq FROM programs WHERE hash = ?").get(hash) as { program: string; audit_seq: number | null } | undefined;
  if (stored !== undefined && store !== undefined && vouched(store, hash, stored.program, stored.audit_seq)) {
    try {
      return { hash, files, statements: decodeProgram(stored.program), cached: true };
    } catch {
      // An unreadable stored program is compiled again and replaced below.
    }
  }
  const statements = await compilePolicy(files, texts);
  const program = encodeProgram(statements);
  store?.write(() => {
    const record = appendAudit(store, {
      runId: "",
      kind: "policy",
      outcome: "note",
      policyHash: hash,
      body: {
        compiled: { program: programDigest(program), files: [...files] },
        // A stored program its record does not vouch for was edited, or written before programs were vouched for.
        ...(stored !== undefined ? { replaced: { program: programDigest(stored.program), vouched: false } } : {}),
      },
    });
    store.db
      .prepare("INSERT INTO programs (hash, program, created, audit_seq) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO UPDATE SET program = excluded.program, audit_seq = excluded.audit_seq")
      .run(hash, program, new Date().toISOString(), record.seq);
  });
  return { hash, files, statements, cached: false };
}

/** The SHA-256 of a stored program's text, which its `policy` record commits to. */
function programDigest(program: string): string {
  return createHash("sha256").update(program).digest("hex");
}

/**
 * Whether the `policy` audit record `seq` vouches for `program` as the compilation of the policy
 * `hash`: it is such a record, it commits to the program's SHA-256, and its own hash holds (one
 * link of the chain: `vigilc audit verify` walks the whole chain).
 */
function vouched(store: Store, hash: string, program: string, seq: number | null): boolean {
  if (seq === null) return false;
  const row = store.db.prepare("SELECT * FROM audit WHERE seq = ?").get(seq) as AuditRow | undefined;
  if (row === undefined || row.kind !== "policy" || row.policy_hash !== hash) return false;
  let body: JsonValue;
  try {
    body = JSON.parse(row.body) as JsonValue;
  } catch {
    return false;
  }
  const compiled = isJsonObject(body) ? body["compiled"] : undefined;
  const digest = compiled !== undefined && isJsonObject(compiled) ? compiled["program"] : undefined;
  if (digest !== programDigest(program)) return false;
  try {
    return linkHash(store.chain, store.key, row.prev_hash, canonicalRecord(row, body)) === row.hash;
  } catch {
    // A keyed chain opened without its key cannot be checked: nothing is vouched for.
    return false;
  }
}

/** The SHA-256 of policy texts: each text with its length before it, so that no two lists of texts collide. */
export function policyHash(texts: readonly string[]): string {
  const hash = createHash("sha256").update(PROGRAM_FORMAT);
  for (const text of texts) hash.update(`\n${Buffer.byteLength(text)}\n`).update(text);
  return hash.digest("hex");
}

async function compilePolicy(files: readonly string[], texts: readonly string[]): Promise<CheckedStatement[]> {
  const { compile } = await import("@vigil/compiler");
  const statements: CheckedStatement[] = [];
  files.forEach((file, index) => {
    const text = texts[index]!;
    const compiled = compile(text, { file });
    const errors = compiled.diagnostics.filter((d) => d.severity === "error");
    if (errors.length > 0) {
      const shown = errors.slice(0, 5).map((d) => `${file}${d.span !== undefined ? `:${d.span.line}:${d.span.column}` : ""}: ${d.code} ${d.message}`);
      const more = errors.length > shown.length ? `; and ${errors.length - shown.length} more` : "";
      throw new PolicyError(`the policy \`${file}\` has ${errors.length} error${errors.length === 1 ? "" : "s"}: ${shown.join("; ")}${more}`);
    }
    for (const policy of compiled.program.policies) statements.push(...policy.statements);
  });
  return statements;
}

/** The checked statements as JSON text: the checked IR is plain data. */
export function encodeProgram(statements: readonly CheckedStatement[]): string {
  return JSON.stringify(statements);
}

export function decodeProgram(text: string): CheckedStatement[] {
  const statements = JSON.parse(text) as unknown[];
  if (!Array.isArray(statements)) throw new Error("a stored program is a list of statements");
  return statements.map((statement) =>
    mapPatterns(statement as CheckedStatement, (pattern) => {
      if (!Array.isArray(pattern.variables)) throw new Error("a stored pattern lists its variables");
      return pattern;
    }),
  );
}

/** A pattern operand of a statement. */
type CheckedPattern = Extract<CheckedStatement, { form: "abs" }>["pattern"];

/** The statement with each of its pattern operands replaced (every form but `always` has some). */
function mapPatterns(statement: CheckedStatement, map: (pattern: CheckedPattern) => CheckedPattern): CheckedStatement {
  switch (statement.form) {
    case "abs":
    case "limit":
      return { ...statement, pattern: map(statement.pattern) };
    case "prec":
    case "resp":
    case "rslv":
    case "bresp":
      return { ...statement, first: map(statement.first), second: map(statement.second) };
    case "until":
      return { ...statement, trigger: map(statement.trigger), resolve: map(statement.resolve), bad: map(statement.bad) };
    case "always":
      return statement;
    default:
      throw new Error(`a stored statement has an unknown form \`${String((statement as { form: unknown }).form)}\``);
  }
}
