import { init, killThreads } from 'z3-solver';
const { Z3, em } = await init();
const useTimeout = process.argv[2] === 't';
let t0 = Date.now();
for (let i = 0; i < 8000; i++) {
  const cfg = Z3.mk_config();
  if (useTimeout) Z3.set_param_value(cfg, "timeout", "20000");
  const ctx = Z3.mk_context_rc(cfg);
  Z3.del_config(cfg);
  const s = Z3.mk_solver(ctx); Z3.solver_inc_ref(ctx, s);
  Z3.solver_from_string(ctx, s, `(declare-datatype Action ((|a:x|) (|a:y|))) (declare-fun action (Int) Action) (assert (= (action 1) |a:x|)) (declare-const r1 Bool) (assert (=> r1 (= (action 1) |a:y|)))`);
  const sym = Z3.mk_string_symbol(ctx, "r1");
  const r1 = Z3.mk_const(ctx, sym, Z3.mk_bool_sort(ctx)); Z3.inc_ref(ctx, r1);
  const r = await Z3.solver_check_assumptions(ctx, s, [r1]);
  const r2 = await Z3.solver_check_assumptions(ctx, s, []);
  Z3.dec_ref(ctx, r1);
  Z3.solver_dec_ref(ctx, s);
  Z3.del_context(ctx);
  if (i % 1000 == 0) console.log(i, Date.now() - t0, process.memoryUsage().rss >> 20);
}
console.log('done', Date.now() - t0, process.memoryUsage().rss >> 20);
await killThreads(em);
