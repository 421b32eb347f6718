// Benchmark: time per statement of both decision procedures on generated traces of 100, 1,000 and
// 10,000 events. A benchmark, not a test: it prints figures and asserts only that the engines agree.
//
//   npm run bench                      all sizes
//   VIGIL_BENCH_SIZES=100,1000 npm run bench
import { performance } from "node:perf_hooks";
import { check, compile, signatureOf, SmtDecider } from "@vigil/compiler";

const sizes = (process.env.VIGIL_BENCH_SIZES ?? "100,1000,10000").split(",").map(Number);

const policy = `
policy bench {
  pattern warp = action in {warpAffine} and status = ok
  rule abs_rm: abs(action in {rm} and path ~ "/etc/*")
  rule prec_validate: prec(warp and transform = $x, action in {validate} and target = $x)
  rule resp_close: resp(action in {open} and id = $f, action in {close} and id = $f)
  rule bresp_ack: bresp[5](action in {alarm}, action in {ack})
  rule rslv_ack: rslv(action in {alarm}, action in {ack})
  rule until_lock: until(action in {lock} and id = $l, action in {unlock} and id = $l, action in {write} and id = $l)
  rule always_taint: always not (action in {send} and once (action in {read} and path ~ "*secret*"))
}
`;

/** A deterministic pseudo-random trace with every action the policy mentions. */
function generate(n, seed = 1) {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const ids = ["a", "b", "c", "d", "e", "f", "g", "h"];
  const events = [];
  for (let position = 1; position <= n; position++) {
    const action = pick(["warpAffine", "validate", "open", "close", "alarm", "ack", "lock", "unlock", "write", "read", "send", "rm", "noop"]);
    const args = {
      transform: pick(ids),
      target: pick(ids),
      id: pick(ids),
      path: pick(["/etc/passwd", "/tmp/x", "/home/secret.txt", "/data/in.csv"]),
    };
    events.push({ position, action, args, status: random() < 0.9 ? "ok" : "error", source: { line: position } });
  }
  return events;
}

const decider = await SmtDecider.create({ timeoutMs: 120_000 });
const rows = [];
try {
  for (const n of sizes) {
    const events = generate(n);
    const compiled = compile(policy, { signature: signatureOf(events) });
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics, null, 2));
    for (const statement of compiled.program.policies.flatMap((p) => p.statements)) {
      const single = { ...compiled, program: { policies: [{ ...compiled.program.policies[0], statements: [statement] }] } };
      const timings = {};
      const verdicts = {};
      for (const engine of ["eval", "smt"]) {
        const repeat = engine === "eval" ? (n <= 1000 ? 50 : 5) : 1;
        const start = performance.now();
        let report;
        for (let k = 0; k < repeat; k++) report = await check(single, events, { engine, decider });
        timings[engine] = (performance.now() - start) / repeat;
        verdicts[engine] = report.statements[0];
      }
      const agree =
        verdicts.eval.holds === verdicts.smt.holds && JSON.stringify(verdicts.eval.witnesses) === JSON.stringify(verdicts.smt.witnesses);
      rows.push({
        events: n,
        rule: statement.name,
        "eval ms": timings.eval.toFixed(3),
        "smt ms": timings.smt.toFixed(1),
        witnesses: verdicts.eval.witnesses.length,
        agree: agree ? "yes" : verdicts.smt.undecided ? `undecided: ${verdicts.smt.undecided}` : "NO",
      });
      console.error(`  ${n} events, ${statement.name}: eval ${timings.eval.toFixed(3)} ms, smt ${timings.smt.toFixed(1)} ms`);
    }
  }
} finally {
  await decider.dispose();
}
console.table(rows);
if (rows.some((row) => row.agree !== "yes")) {
  console.error("the engines disagree (see the table)");
  process.exitCode = 1;
}
