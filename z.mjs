import { init, killThreads } from 'z3-solver';
const api = await init();
let t0 = Date.now();
for (let i=0;i<3000;i++){
  const ctx = new api.Context('c'+(i%5));
  const s = new ctx.Solver();
  s.fromString(`(declare-datatype Action ((|a:x|) (|a:y|))) (declare-fun action (Int) Action) (assert (= (action 1) |a:x|)) (declare-const r1 Bool) (assert (=> r1 (= (action 1) |a:y|)))`);
  const r = await s.check(ctx.Bool.const('r1'));
  s.release(); 
  if (i%500==0) console.log(i, Date.now()-t0, process.memoryUsage().rss>>20);
}
console.log('done', Date.now()-t0);
await killThreads(api.em);
