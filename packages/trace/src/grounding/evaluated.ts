/**
 * Text the shell evaluates as code, found in a parsed command line: where Bash takes a value as an
 * arithmetic expression, a prompt string or a variable's name, and where a builtin runs text given
 * to it as a command. Such text can hold a command substitution the line does not show:
 *
 *     x='a[$(rm -rf .vigil)]'; echo $((x))
 *
 * runs `rm`, because Bash evaluates the value of `x` as an arithmetic expression, and the subscript
 * of `a[…]` in it is expanded, `$(…)` included. The same holds for `((…))`, `let`, `$[…]`, the
 * values given to a variable declared `-i`, the subscripts of indexed arrays (`${a[$i]}`,
 * `a[i]=…`), the offsets of `${x:…}`, the operands of `[[ … -eq … ]]`, a name given to `printf -v`,
 * `read`, `test -v`, `unset` or `declare -n` (a subscript in it is evaluated), `${!x}` (the value of
 * `x` is such a name), `${x@P}` and `PS4` under `set -x` (a prompt string: `$(…)` in it runs).
 * `test`, `[` and `printf %d` do not evaluate their operands.
 *
 * The rule: a construct that evaluates is fine when every value it evaluates is known from the line
 * to be harmless; otherwise it is reported. What is harmless:
 *
 * - a number, and what is known to be one: the result of an arithmetic expansion or assignment
 *   (`i=$((i+1))`, `((i++))`, a `for ((…))` loop's variable), `$#`, `$?`, `$$`, `$!`, `${#x}`,
 *   Bash's own numeric variables (`RANDOM`, `SECONDS`, `LINENO`, `UID`, …), the words of `for i in
 *   1 2 3` and `{1..10}`, and the output of a program that prints only numbers (`$(wc -l < f)`,
 *   `$(nproc)`, `$(date +%s)`, `$(seq 1 5)`, `$(grep -c x f)`, `$(git rev-list --count HEAD)`);
 * - a literal the line assigns, itself judged by this rule (`x='1+2'`, `x=y` with `y` harmless);
 *   for a prompt, a literal without a command substitution; for a name, a plain name.
 *
 * A variable's value is every value the line assigns it anywhere (a loop may assign it after the
 * place that reads it), and, where no assignment comes before that place in the line's text, the
 * value it has when the line starts: the shell's environment. That one is not known here, so the
 * construct is reported with the names whose environment value alone decides it
 * (`environment`: a consumer that knows the environment, the guard in the hook, may let it
 * through). A value read at run time (`read`, `mapfile`, a command's output, a file `source`d or
 * text `eval`ed before the place, a positional parameter) is not known: the construct is reported
 * without `environment`.
 *
 * The order of the line's text stands in for the order it runs in; a script nested in the line
 * (`bash -c '…'`) does not see the line's assignments, and its grounding drops `environment`.
 *
 * The places are found by evaluation-collector.ts, and each is judged by evaluated-values.ts over
 * the values the line's words give (evaluated-words.ts).
 */

/** How a value from the environment is evaluated, which says which values are harmless (see {@link evaluatedValueSafe}). */
export type EvaluatedAs = "arithmetic" | "reference" | "prompt";

/** A construct of the line that evaluates text not known to be harmless. */
export interface EvaluatedText {
  /** The construct, in short: `$((…))`, `let`, `${…@P}`, `set -x`, `mapfile -C`, … */
  readonly by: string;
  /** The construct as written (cut to 200 characters). */
  readonly text: string;
  /** Why its value is not known, when it is not the environment's. */
  readonly why?: string;
  /**
   * When the values of these variables in the shell's environment alone decide it: each name, and
   * how its value is evaluated. Absent: something else is not known.
   */
  readonly environment?: Readonly<Record<string, EvaluatedAs>>;
}

/**
 * Whether an environment variable's value is harmless where it is evaluated: as arithmetic, a
 * whole number (its digits, a base, a sign); as a reference, a plain name or a number; as a
 * prompt, a string without a command or arithmetic substitution. An empty value is harmless.
 */
export function evaluatedValueSafe(as: EvaluatedAs, value: string): boolean {
  if (INTEGER.test(value)) return true;
  if (as === "arithmetic") return false;
  if (as === "reference") return /^\s*[A-Za-z_][A-Za-z0-9_]*\s*$/.test(value);
  return promptSafe(value);
}

const INTEGER = /^\s*[-+]?\s*(0[xX][0-9A-Fa-f]+|[0-9]+(#[0-9A-Za-z@_]+)?)?\s*$/;

/**
 * A prompt string without a command substitution, an arithmetic expansion or an expansion that
 * evaluates: `$NAME`, `${NAME}`, `${NAME[N]}`, `${#NAME}` and `${NAME:-text}` are fine (a
 * parameter's value is put in, not expanded again), and backslash escapes (`\u`, `\$`).
 */
export function promptSafe(text: string): boolean {
  if (text.includes("`")) return false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === "\\") {
      index++;
      continue;
    }
    if (char !== "$") continue;
    const next = text[index + 1];
    if (next === undefined || /[A-Za-z0-9_#?$!*@-]/.test(next) || /\s/.test(next)) continue;
    if (next !== "{") return false;
    const close = text.indexOf("}", index);
    if (close < 0) return false;
    const body = text.slice(index + 2, close);
    if (!/^#?[A-Za-z_][A-Za-z0-9_]*(\[[0-9@*]+\])?(:?[-+=?][^$`{}[\]\\]*)?$|^[0-9#?$!*@-]$/.test(body)) return false;
    index = close;
  }
  return true;
}
