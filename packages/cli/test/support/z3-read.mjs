// Reads an SMT-LIB 2 script on stdin, runs it in a fresh Z3 (the z3-solver package, the same
// solver a `z3` binary would be), and prints Z3's responses: what another run of Z3 makes of the
// output of `vigilc lower`.
import { readFileSync } from "node:fs";
import { init } from "z3-solver";

const script = readFileSync(0, "utf8");
const { Z3 } = await init();
const config = Z3.mk_config();
const context = Z3.mk_context(config);
Z3.del_config(config);
const responses = await Z3.eval_smtlib2_string(context, script);
process.stdout.write(responses, () => process.exit(0));
