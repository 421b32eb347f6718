// The generated workload the scale benchmarks share: twenty rules of every form over ten actions,
// a deterministic run of events for them, and how a command is run and measured (bench-sql.mjs,
// bench-smt.mjs).
import { spawnSync } from "node:child_process";

const reportRss = `data:text/javascript,process.on("exit",()=>process.stderr.write("\\n@maxrss "+process.resourceUsage().maxRSS+"\\n"))`;

/** Runs `node ARGS…` to the end: its wall time, peak resident memory (MB) and output; throws when it fails. */
export function run(args) {
  const start = performance.now();
  const child = spawnSync(process.execPath, ["--import", reportRss, ...args], { encoding: "utf8", maxBuffer: 2 ** 31 - 1, stdio: ["ignore", "pipe", "pipe"] });
  const seconds = (performance.now() - start) / 1000;
  const rss = Number(/@maxrss (\d+)/.exec(child.stderr)?.[1] ?? NaN) / 1024;
  if (child.status !== 0) throw new Error(`${args.join(" ")} exited ${child.status}:\n${child.stderr.slice(0, 2000)}`);
  return { seconds, rss, stdout: child.stdout };
}

/** Twenty rules of every form, over ten actions with an id, a path and an amount. */
export const policy = `policy bench {
  rule r01: abs(action in {a0} and path ~ "/secret/*")
  rule r02: prec(action in {a1} and id = $i, action in {a2} and id = $i)
  rule r03: prec(action in {a3}, action in {a4} and status = ok)
  rule r04: resp(action in {a5} and id = $i, action in {a6} and id = $i)
  rule r05: resp(action in {a7}, action in {a8})
  rule r06: rslv(action in {a1} and id = $i, action in {a9} and id = $i)
  rule r07: bresp[3](action in {a2}, action in {a3})
  rule r08: bresp[5s](action in {a4}, action in {a5})
  rule r09: until(action in {a0} and id = $i, action in {a6} and id = $i, action in {a7})
  rule r10: until(action in {a8}, action in {a9}, action in {a1} and status = error)
  rule r11: always (action in {a2} implies once action in {a1})
  rule r12: always (action in {a3} implies once[10s] action in {a0})
  rule r13: always (action in {a4} and status = error implies eventually action in {a5})
  rule r14: limit[5](action in {a6} and id = $i)
  rule r15: limit[3 per 10s](action in {a7})
  rule r16: limit[100.50 of amount per 1m](action in {a8})
  rule r17: abs(action in {a9} and path matches /\\.env$/)
  rule r18: prec(action in {a5}, action in {a0}) after action in {a1}
  rule r19: resp(action in {a2}, action in {a3}) between action in {a4} and action in {a5}
  rule r20: abs(action in {a6} and status = error) before action in {a9}
}
`;

/** A small deterministic generator (xorshift), so every run of the benchmark judges the same corpus. */
export function random(seed) {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** The events of run number `run`, `perRun` of them, with times, ids, paths and amounts. */
export function* corpusEvents(run, perRun) {
  const next = random(run * 7919 + 17);
  let time = Date.UTC(2026, 10, 1) + run * 1000;
  for (let seq = 1; seq <= perRun; seq++) {
    time += Math.floor(next() * 3000);
    const action = `a${Math.floor(next() * 10)}`;
    const odd = next();
    const path = odd < 0.01 ? "/secret/key" : odd < 0.02 ? "/work/.env" : `/work/${Math.floor(next() * 50)}.txt`;
    yield {
      action,
      args: { id: Math.floor(next() * 20), path, amount: Math.round(next() * 5000) / 100 },
      status: next() < 0.1 ? "error" : "ok",
      time,
    };
  }
}
