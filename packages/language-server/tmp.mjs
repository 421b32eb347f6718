import { compile, readTrace, signatureOf } from "@vigil/compiler";
import { readFileSync } from "node:fs";
const sig = signatureOf(readTrace(readFileSync("packages/language-server/test/fixtures/workspace/traces/run-b.jsonl","utf8")).trace.events);
const cases = [
 'policy p {\n  rule r: abs(action in {deplyo})\n}\n',
 'policy p {\n  rule r: abs(action in {deploy} and evn in {"prod"})\n}\n',
 'policy p {\n  rule r: abs(action in {deploy} and env in {prod})\n}\n',
 'policy p {\n  rule r: abs(action in {deploy} and env in {"prdo"})\n}\n',
 'policy p {\n  /// stray\n\n  rule r: abs(action in {deploy})\n}\n',
 'policy p {\n  rule r: abs(action in {deploy}) warn ""\n}\n',
 'policy p {\n  rule r: bresp(action in {deploy}, action in {check})\n}\n',
 'policy p {\n  rule r: abs(action in {deploy}\n}\n',
 'policy p {\n  pattern secret = action in {read_file}\n  rule r: abs(secrte)\n}\n',
 'policy p {\n  rule r: abs(action in {deploy}) deny\n}\n',
 'policy p \n  rule r: abs(action in {deploy})\n}\n',
 'policy p {\n  rule r: abs(action in {deploy})\n',
 'policy p {\n  rule r: abs(action in {deploy}) "msg"\n}\n',
 'policy p {\n  rule r: prec(action in {deploy} env in {"prod"}, action in {check})\n}\n',
 'policy p {\n  rule r: abs(action in {deploy} and env in {"1.3.0"})\n}\n',
 'policy p {\n  rule r: abs(action in {deploy} and "force" in {"true"})\n}\n',
];
for (const c of cases) { const r = compile(c, { signature: sig }); console.log(JSON.stringify(c)); for (const d of r.diagnostics) console.log("  ", d.code, d.severity, d.message, d.fix ? "FIX: " + d.fix.title + " " + JSON.stringify(d.fix.edits.map(e => [e.span.start, e.span.end, e.newText])) : ""); }
