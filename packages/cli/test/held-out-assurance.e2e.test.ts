import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Held-out cases of false assurance: the tool must never say "yes" (holds, passed, no difference,
 * equivalent) without having decided it. Each case runs the built CLI (`packages/cli/dist/main.js`)
 * and asserts the right answer. A case the product answers wrong is `it.fails`, with a one-line
 * `KNOWN:` comment saying what it said, so that the file passes and records the miss; a case that
 * starts passing then fails this file, which is the signal to turn it back into `it`.
 *
 * These cases were written from the user documentation only (README, docs/cli.md, docs/language.md,
 * docs/testing.md, docs/analysis.md, examples/), not from the implementation of the fixes.
 */

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const cli = resolve(here, "../dist/main.js");
const fx = join(here, "fixtures/held-out-assurance");
const KILL_MS = 120_000;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/main.js ARGS` from the repository root; killed after 120 s (a hang fails). */
function vigilc(args: readonly string[]): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), KILL_MS);
    child.on("error", (e) => {
      clearTimeout(timer);
      fail(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr });
    });
  });
}

function noCrash(r: Run): void {
  expect(r.signal, "killed by the 120 s bound").toBeNull();
  expect(r.stderr).not.toMatch(/internal error/i);
}

// ---- tally: cases total / answered right / known wrong ----------------------------------------

const tally = { total: 0, right: 0, knownWrong: 0, unexpectedWrong: 0 };

/** A case the product must answer right. */
function kase(name: string, body: () => Promise<void>): void {
  it(name, async () => {
    tally.total++;
    try {
      await body();
    } catch (e) {
      tally.unexpectedWrong++;
      throw e;
    }
    tally.right++;
  });
}

/** A case the product answers wrong today (see the `KNOWN:` comment above each call). */
function knownWrong(name: string, body: () => Promise<void>): void {
  it.fails(name, async () => {
    tally.total++;
    try {
      await body();
    } catch (e) {
      tally.knownWrong++;
      throw e;
    }
    tally.right++;
  });
}

afterAll(() => {
  const line =
    `held-out assurance: ${tally.total} cases total / ${tally.right} answered right / ` +
    `${tally.knownWrong} known wrong` +
    (tally.unexpectedWrong > 0 ? ` / ${tally.unexpectedWrong} unexpectedly wrong` : "");
  console.log(line);
});

// ---- 1. vigilc test on every engine ----------------------------------------------------------

const ENGINES = ["eval", "monitor", "smt", "sql"] as const;
type Engine = (typeof ENGINES)[number];

/** What each test file must do on each engine: pass (exit 0) or fail (exit 1, never 0). */
const engineCases: { file: string; what: string; pass: Engine[]; known?: Partial<Record<Engine, string>> }[] = [
  { file: "true.vigiltest", what: "every expectation true", pass: [...ENGINES] },
  { file: "true-sum.vigiltest", what: "a sum exactly at its cap in exact decimals (0.1 + 0.2 + 99.7 = 100)", pass: [...ENGINES] },
  { file: "false-holds-but-violated.vigiltest", what: "`holds` for a wildcard+regex abs that is violated", pass: [] },
  { file: "false-wrong-witness.vigiltest", what: "`violated at 3` for a resp whose witness is 2", pass: [] },
  { file: "false-violated-but-holds.vigiltest", what: "`violated` for a sum limit that holds", pass: [] },
  {
    file: "false-wrong-broken.vigiltest",
    what: "`violated at 5 broken by 6` for an until broken by 9",
    pass: [],
    // Answered wrong when first measured (fixed since): `--engine monitor` passed it, ignoring `broken by`.
  },
  { file: "false-extra-witness.vigiltest", what: "`violated at 4, 8` for a rate limit whose only witness is 8", pass: [] },
  { file: "false-others.vigiltest", what: "`others hold` when an unanswered open is violated", pass: [] },
  { file: "false-window.vigiltest", what: "`holds` for three posts within 59.999 s under limit[2 per 1m]", pass: [] },
  { file: "false-sum.vigiltest", what: "`holds` for 33.33 + 33.33 + 33.35 = 100.01 under a cap of 100", pass: [] },
  { file: "undecidable-decide.vigiltest", what: "a `decide` line (only the monitor decides; true there)", pass: ["monitor"] },
  { file: "undecidable-digits.vigiltest", what: "an amount with 19 decimals (true; SQL cannot hold it exactly)", pass: ["eval", "monitor", "smt"] },
];

describe("1. vigilc test --engine E: never a false pass", () => {
  for (const c of engineCases) {
    for (const engine of ENGINES) {
      const shouldPass = c.pass.includes(engine);
      const name = `${c.file} on ${engine}: ${shouldPass ? "passes" : "fails"} (${c.what})`;
      const body = async () => {
        const r = await vigilc(["test", join(fx, "engines", c.file), "--engine", engine]);
        noCrash(r);
        if (shouldPass) {
          expect(r.code, r.stdout + r.stderr).toBe(0);
          expect(r.stdout).toMatch(/1 passed/);
        } else {
          expect(r.code, r.stdout + r.stderr).toBe(1);
          expect(r.stdout).toMatch(/0 passed, 1 failed/);
          if (c.file.startsWith("undecidable-")) expect(r.stdout).toMatch(new RegExp(`undecided on engine ${engine}`));
        }
      };
      if (c.known?.[engine] !== undefined) knownWrong(name, body);
      else kase(name, body);
    }
  }
});

// ---- 2. vigilc diff --------------------------------------------------------------------------

interface Relation {
  relation: string;
  basis: string;
  depth: number;
  values: boolean;
  leftOut: string[];
  counterexamples: { rejectedBy: "old" | "new"; broken: string[]; confirmed: boolean; events: Record<string, unknown>[] }[];
}
interface DiffJson {
  whole: Relation;
  rules: (Relation & { rule: string; change: string })[];
}

/** Pairs a short run tells apart, and how the new version relates to the old. */
const differentPairs: { name: string; relation: "stricter" | "looser"; what: string }[] = [
  { name: "wild-regex", relation: "looser", what: 'wildcard + regex on one key: path ~ "*.key" and path matches /^\\/tmp\\//' },
  { name: "two-wild", relation: "looser", what: 'two wildcards on one key: "*.env" and "secret*"' },
  { name: "const-regex", relation: "looser", what: 'constant + anchored regex: cmd in {"rm -rf /"} and /^rm -rf/' },
  { name: "class-wild", relation: "looser", what: 'regex character class + wildcard: /^[0-9]/ and "*.csv"' },
  { name: "class-wild-prec", relation: "stricter", what: "a prec trigger narrowed by classes and counts, with a wildcard" },
  { name: "regex-regex-resp", relation: "stricter", what: "two regexes (one case-insensitive) on one key in a resp trigger" },
  { name: "limit-loosened", relation: "looser", what: "limit[3 per 10m] → limit[4 per 10m]" },
  { name: "limit-window-widened", relation: "stricter", what: "limit[3 per 10m] → limit[3 per 1h]" },
  { name: "limit-per-recipient", relation: "stricter", what: "a per-recipient limit made global" },
  { name: "limit-count-high", relation: "looser", what: "limit[9 per 1h] → limit[10 per 1h] (needs 11 events)" },
  { name: "limit-sum", relation: "looser", what: "a sum limit per 1d → per 12h" },
  { name: "bresp-window", relation: "stricter", what: "bresp[5m] → bresp[2m]" },
  { name: "once-window", relation: "looser", what: "once[1h] → once[30m]" },
  { name: "bresp-count", relation: "looser", what: "bresp[3] → bresp[4]" },
];

/** Pairs with the same meaning, rewritten: never "different"; any "no difference" names its bound. */
const samePairs: { name: string; what: string }[] = [
  { name: "same-reorder", what: "a conjunction reordered" },
  { name: "same-two-wild", what: 'two wildcards vs one: "*@corp.com" and "admin*" vs "admin*@corp.com" (same for one value)' },
  { name: "same-anchored", what: 'an anchored regex /^sudo ls$/ vs the constant "sudo ls"' },
  { name: "same-implies", what: "always not (A and once B) vs always (A implies not once B)" },
  { name: "same-limit0", what: "abs(ψ) vs limit[0](ψ)" },
  { name: "same-demorgan", what: "not (A or B) vs not A and not B" },
  { name: "same-prec-vars", what: "a prec with a variable, its patterns reordered" },
  { name: "limit-beyond-search", what: "limit[12 per 1h] vs limit[13 per 1h]: told apart only by 14 events, past the search" },
];

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-held-out-"));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const pairFiles = (name: string) => [join(fx, "diff", `${name}.old.vigil`), join(fx, "diff", `${name}.new.vigil`)] as const;

describe("2. vigilc diff: different pairs are reported different, with a run that shows it", () => {
  for (const p of differentPairs) {
    kase(`diff ${p.name}: ${p.relation} (${p.what})`, async () => {
      const [oldFile, newFile] = pairFiles(p.name);
      const r = await vigilc(["diff", oldFile, newFile, "--format", "json"]);
      noCrash(r);
      expect(r.code, r.stderr).toBe(1);
      const j = JSON.parse(r.stdout) as DiffJson;
      expect(j.whole.relation).toBe(p.relation);
      expect(j.rules).toHaveLength(1);
      expect(j.rules[0]!.relation).toBe(p.relation);
      const ces = j.rules[0]!.counterexamples;
      expect(ces.length).toBeGreaterThan(0);
      // Replay each run independently with `vigilc check`: the rejecting version is violated, the other holds.
      for (const [i, ce] of ces.entries()) {
        expect(ce.confirmed).toBe(true);
        expect(ce.rejectedBy).toBe(p.relation === "looser" ? "old" : "new");
        const trace = join(scratch, `${p.name}-${i}.jsonl`);
        writeFileSync(trace, ce.events.map((e) => JSON.stringify(e)).join("\n") + "\n");
        const [rejecting, accepting] = ce.rejectedBy === "old" ? [oldFile, newFile] : [newFile, oldFile];
        const bad = await vigilc(["check", rejecting, "--trace", trace]);
        const good = await vigilc(["check", accepting, "--trace", trace]);
        expect(bad.code, bad.stdout + bad.stderr).toBe(1);
        expect(good.code, good.stdout + good.stderr).toBe(0);
      }
      // The human report names the bound of its "no other difference".
      const h = await vigilc(["diff", oldFile, newFile]);
      expect(h.code).toBe(1);
      expect(h.stdout).toMatch(new RegExp(`${p.relation}: the new version`));
      expect(h.stdout).toMatch(/no other difference in runs of up to \d+ events/);
    });
  }
});

describe("2. vigilc diff: pairs with the same meaning are not called different", () => {
  for (const p of samePairs) {
    kase(`diff ${p.name}: no difference (${p.what})`, async () => {
      const [oldFile, newFile] = pairFiles(p.name);
      const r = await vigilc(["diff", oldFile, newFile, "--format", "json"]);
      noCrash(r);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as DiffJson;
      for (const rel of [j.whole, ...j.rules.filter((x) => x.change !== "unchanged")]) {
        expect(rel.relation).toBe("equivalent");
        expect(rel.counterexamples).toHaveLength(0);
        if (rel.basis !== "proof") expect(rel.basis).toBe("bounded");
      }
      const h = await vigilc(["diff", oldFile, newFile]);
      expect(h.code).toBe(0);
      expect(h.stdout).not.toMatch(/stricter|looser|incomparable/);
      if (j.whole.basis === "proof") {
        expect(h.stdout).toMatch(/equivalent \(proven\)/);
      } else {
        // Any "no difference" names its bound: K events, and not proven.
        expect(h.stdout).toMatch(/no difference found in runs of up to \d+ events/);
        expect(h.stdout).toMatch(/not proven equivalent/);
        expect(h.stdout).not.toMatch(/equivalent \(proven\)/);
      }
      if (p.name === "limit-beyond-search") {
        // Only 14 events tell them apart: the search must say it left those runs out.
        expect(j.whole.basis).toBe("bounded");
        expect(j.whole.leftOut.join(" ")).toMatch(/runs of 14 events/);
      }
      if (p.name === "same-two-wild") {
        // Under one key's list, ["admin@x.org", "y@corp.com"] meets both wildcards but not the joined one:
        // not a proof, and the search must name lists as left out.
        expect(j.whole.basis).toBe("bounded");
        expect(j.whole.leftOut.join(" ")).toMatch(/lists at `to`/);
      }
    });
  }
});

// ---- 3. vigilc analyze on many rules with a signature ---------------------------------------

describe("3. vigilc analyze: many rules and a trace signature", () => {
  const policy = join(fx, "analyze", "many.vigil");
  const trace = join(fx, "analyze", "trace.jsonl");

  kase("analyze many.vigil --trace: answers, no internal error", async () => {
    const r = await vigilc(["analyze", policy, "--trace", trace]);
    noCrash(r);
    expect([0, 1]).toContain(r.code);
    expect(r.stderr).toMatch(/analyzed 1 policy file over runs of up to 5 events/);
    expect(r.stderr).toMatch(/\[A0002\]/);
  });

  kase("analyze many.vigil --trace --rlimit 30000: A0007 for the hard rules, the rest still answered", async () => {
    const r = await vigilc(["analyze", policy, "--trace", trace, "--rlimit", "30000"]);
    noCrash(r);
    expect([0, 1]).toContain(r.code);
    expect(r.stderr).toMatch(/\[A0007\]/);
    expect(r.stderr).toMatch(/\[A0002\]/);
    expect(r.stderr).toMatch(/\[A0001\]/);
    expect(r.stderr).toMatch(/analyzed 1 policy file/);
  });

  kase("analyze many.vigil --trace --format json: one JSON document, findings on several rules", async () => {
    const r = await vigilc(["analyze", policy, "--trace", trace, "--format", "json"]);
    noCrash(r);
    expect([0, 1]).toContain(r.code);
    const j = JSON.parse(r.stdout) as { depth: number; files: { diagnostics: { code: string; message: string }[] }[] };
    expect(j.depth).toBe(5);
    const rulesNamed = new Set(j.files[0]!.diagnostics.flatMap((d) => [...d.message.matchAll(/`many\.(\w+)`/g)].map((m) => m[1])));
    expect(rulesNamed.size).toBeGreaterThan(3);
  });
});

// ---- 4. corpus closed world ------------------------------------------------------------------

describe("4. vigilc check P --trace DIR/: a misspelled name is one warning for the corpus", () => {
  const runs = join(fx, "corpus", "runs") + "/";
  const typos = [
    { file: "typo-action.vigil", name: "read_flie", suggestion: "read_file" },
    { file: "typo-key.vigil", name: "recipent", suggestion: "recipient" },
  ];
  for (const t of typos) {
    kase(`corpus ${t.file}: one "did you mean \`${t.suggestion}\`", not one per run`, async () => {
      const r = await vigilc(["check", join(fx, "corpus", t.file), "--trace", runs]);
      noCrash(r);
      expect(r.code).toBe(0);
      expect(r.stderr.match(/did you mean/g) ?? []).toHaveLength(1);
      expect(r.stderr).toContain(`did you mean \`${t.suggestion}\``);
      expect(r.stderr.split(`\`${t.name}\``).length - 1).toBe(1);
    });
    kase(`corpus ${t.file} --strict: one error for the corpus, exit 2, no verdict`, async () => {
      const r = await vigilc(["check", join(fx, "corpus", t.file), "--trace", runs, "--strict"]);
      noCrash(r);
      expect(r.code).toBe(2);
      expect(r.stderr.match(/^error:/gm) ?? []).toHaveLength(1);
      expect(r.stderr).toMatch(/--strict: 1 warning .* counts as an error; no verdict is given/);
      expect(r.stdout).not.toMatch(/verdict: safe/);
    });
  }

  kase("corpus typo-both.vigil --strict: three warnings, still one error for the corpus", async () => {
    const r = await vigilc(["check", join(fx, "corpus", "typo-both.vigil"), "--trace", runs, "--strict"]);
    noCrash(r);
    expect(r.code).toBe(2);
    expect(r.stderr.match(/did you mean/g) ?? []).toHaveLength(3);
    expect(r.stderr.match(/^error:/gm) ?? []).toHaveLength(1);
    expect(r.stderr).toMatch(/--strict: 3 warnings .* count as errors; no verdict is given/);
  });

  // Answered wrong when first measured (fixed since): V1103 said no "did you mean" for a value.
  kase('corpus typo-value.vigil: one note with "did you mean `cold-storage`"', async () => {
    const r = await vigilc(["check", join(fx, "corpus", "typo-value.vigil"), "--trace", runs]);
    noCrash(r);
    expect(r.stderr.match(/V1103/g) ?? []).toHaveLength(1);
    expect(r.stderr.match(/did you mean/g) ?? []).toHaveLength(1);
    expect(r.stderr).toMatch(/did you mean[^\n]*cold-storage/);
  });

  kase("corpus clean.vigil --strict: no warning, a verdict", async () => {
    const r = await vigilc(["check", join(fx, "corpus", "clean.vigil"), "--trace", runs, "--strict"]);
    noCrash(r);
    expect(r.code).toBe(1); // every run archives to cold-storage: violated, judged
    expect(r.stderr).not.toMatch(/did you mean|--strict/);
  });
});

// ---- 5. lints --------------------------------------------------------------------------------

describe("5. lints: scope patterns mixing and/or; misspelled statuses in a .vigiltest", () => {
  const trace = join(fx, "lint", "trace.jsonl");
  for (const f of ["after-or-and.vigil", "before-and-or.vigil", "until-or-and.vigil", "after-not-and-or.vigil"]) {
    kase(`V1108 for ${f}`, async () => {
      const r = await vigilc(["check", join(fx, "lint", f), "--trace", trace]);
      noCrash(r);
      expect(r.stderr.match(/warning\[V1108\]/g) ?? []).toHaveLength(1);
      const strict = await vigilc(["check", join(fx, "lint", f), "--trace", trace, "--strict"]);
      expect(strict.code).toBe(2);
    });
  }
  kase("no V1108 for after-parenthesized.vigil", async () => {
    const r = await vigilc(["check", join(fx, "lint", "after-parenthesized.vigil"), "--trace", trace]);
    noCrash(r);
    expect(r.stderr).not.toMatch(/V1108/);
  });

  // Each file's expectations would pass if the word were read as a second event: the right answer
  // is exit 2 with V2109 naming the word, on every engine (checked with the default, all).
  const statusWords: { word: string; known?: string }[] = [
    // `fialed`, `sucess`, `faild`: read as events when first measured (fixed since).
    { word: "fialed" },
    { word: "succeeded" },
    { word: "errored" },
    { word: "OK" },
    { word: "Ok" },
    { word: "ERROR" },
    { word: "Error" },
    { word: "sucess" },
    { word: "faild" },
    { word: "errror" },
  ];
  for (const s of statusWords) {
    const name = `misspelled status \`${s.word}\` in a .vigiltest is reported (V2109), not read as an event`;
    const body = async () => {
      const r = await vigilc(["test", join(fx, "lint", `status-${s.word}.vigiltest`)]);
      noCrash(r);
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`V2109\\][^\\n]*\`${s.word}\``));
      expect(r.stdout).not.toMatch(/1 passed/);
    };
    if (s.known !== undefined) knownWrong(name, body);
    else kase(name, body);
  }
});

// ---- 6. check --why on scopes that never open ---------------------------------------------------

describe("6. vigilc check --why: a scope that never opened is said so", () => {
  const trace = join(fx, "why", "trace.jsonl");
  const cases: { file: string; rule: string; scopeWord: RegExp; opened?: boolean }[] = [
    { file: "after.vigil", rule: "after_never", scopeWord: /its `after` pattern/ },
    { file: "between.vigil", rule: "between_never", scopeWord: /first pattern of its `between`/ },
    { file: "until.vigil", rule: "until_never", scopeWord: /its `after` pattern/ },
    { file: "abs.vigil", rule: "abs_never", scopeWord: /its `after` pattern/ },
    { file: "limit.vigil", rule: "limit_never", scopeWord: /its `after` pattern/ },
  ];
  for (const c of cases) {
    kase(`--why ${c.file}: "its scope never opened", not "as the rule asks"`, async () => {
      const r = await vigilc(["check", join(fx, "why", c.file), "--trace", trace, "--why"]);
      noCrash(r);
      expect(r.code).toBe(0);
      const line = r.stdout.split("\n").find((l) => l.includes(`w.${c.rule}`)) ?? "";
      expect(line).toMatch(/holds vacuously: its scope never opened/);
      expect(line).toMatch(c.scopeWord);
      expect(r.stdout).not.toMatch(/as the rule asks/);
    });
  }
  kase('--why unclosed.vigil: a `between` stretch that never closed is "not judged"', async () => {
    const r = await vigilc(["check", join(fx, "why", "unclosed.vigil"), "--trace", trace, "--why"]);
    noCrash(r);
    expect(r.code).toBe(0);
    const line = r.stdout.split("\n").find((l) => l.includes("w.between_unclosed")) ?? "";
    expect(line).toMatch(/never closed/);
    expect(line).toMatch(/not judged/);
    expect(r.stdout).not.toMatch(/as the rule asks/);
    expect(line).not.toMatch(/each (preceded|followed)/);
  });
  kase("--format json for a never-opened scope: the scope field says it never opened", async () => {
    const r = await vigilc(["check", join(fx, "why", "after.vigil"), "--trace", trace, "--format", "json"]);
    noCrash(r);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as {
      statements: { name: string; holds: boolean; scope?: { count: number }; triggers?: { count: number } }[];
    };
    const st = j.statements.find((s) => s.name === "after_never")!;
    expect(st.holds).toBe(true);
    // The scope opened 0 times, and the trigger (deploy, at 2 and 5 outside any scope) is counted in none.
    expect(st.scope?.count).toBe(0);
    expect(st.triggers?.count).toBe(0);
  });
});

// Keep `readFileSync` used for fixture sanity: every fixture named above exists.
it("fixtures exist", () => {
  expect(readFileSync(join(fx, "engines", "policy.vigil"), "utf8")).toMatch(/policy vault/);
});
