import type { CheckedPattern, CheckedProgram, CheckedScope, CheckedStatement, Formula, Subject } from "@vigil/checker";
import { isTemporal, needsTime, ruleId, usesContains, usesVariables } from "@vigil/checker";
import { diagnostic, type Diagnostic } from "@vigil/diagnostics";
import { decimalOf, formatDecimal, type PathSegment } from "@vigil/trace";
import { dialects, type Dialect, type DialectName } from "./dialect.js";
import { Inexpressible } from "./inexpressible.js";
import { ValueAtoms } from "./value-atoms.js";

/**
 * A policy as SQL over the canonical events table and its values table (`events-table.ts` in the
 * trace package), one query per rule and one for the whole policy. Each query returns one row per
 * witness of a rule in a run, and one row per run on which a rule is undecided:
 *
 *   rule INTEGER  the rule's index in the program (policies in order, their rules in order)
 *   run           the run
 *   seq           the witness (for `until`, the trigger of a broken interval); for an undecided
 *                 rule, the event that made it so
 *   broken_by     for `until`, the bad event that broke the interval; else NULL
 *   problem       NULL for a witness; `no_time`, `time_backwards` or `amount` for an undecided rule
 *   time, prev_time  for a problem of time: the event's time and the time before it
 *
 * The SQL is Figure 5's R_φ(e) read per event, with the forms decided by aggregates and window
 * functions instead of loops: `prec` compares each trigger with the first earlier response of its
 * binding (`GROUP BY run, stretch, binding`), `resp` and `rslv` with the last, `bresp` and `until`
 * with the next one after it (a window over the triggers and responses together, `ROWS BETWEEN 1
 * FOLLOWING AND UNBOUNDED FOLLOWING`), `once` and `eventually` are windows over the preceding or
 * following rows, a limit a running count or sum less what fell out of its window (`RANGE …
 * PRECEDING` over the times), and a scope cuts each run into stretches with a running count of the
 * events that open and close them. Atoms on values are `EXISTS` over the values table, where each
 * key path's values are rows (`keyPathPlace`), so the SQL reads no JSON and every engine reads the
 * same values the other decision procedures do (`value-atoms.ts`).
 */

export interface SqlTables {
  /** The events table (default `events`). */
  readonly events: string;
  /** The values table (default `event_values`). */
  readonly values: string;
}

export const defaultTables: SqlTables = { events: "events", values: "event_values" };

export interface CompiledRule {
  /** The rule's index in the program: the `rule` column of its rows. */
  readonly index: number;
  readonly policy: string;
  readonly name: string;
  readonly statement: CheckedStatement;
  /** The query of this rule alone; undefined when the dialect cannot express it exactly (see the diagnostics). */
  readonly sql: string | undefined;
  /** Why the dialect cannot express it (S0001), when it cannot. */
  readonly diagnostics: readonly Diagnostic[];
}

export interface CompiledSql {
  readonly dialect: DialectName;
  readonly rules: readonly CompiledRule[];
  /** One query for every rule the dialect can express; undefined when it can express none. */
  readonly sql: string | undefined;
  /** S0001 for each rule left out. */
  readonly diagnostics: readonly Diagnostic[];
}

export interface CompileSqlOptions {
  readonly dialect?: DialectName;
  readonly tables?: Partial<SqlTables>;
  /** The policy file, for the diagnostics. */
  readonly file?: string;
}

/** Whether a name can be written into the SQL as a table: letters, digits and `_`, qualified by up to two names (`schema.table`). */
export function isTableName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}$/.test(name);
}

/** The SQL of a program's statements (or of the statements given), in their order. */
export function compileSql(program: CheckedProgram | readonly CheckedStatement[], options: CompileSqlOptions = {}): CompiledSql {
  const dialect = dialects[options.dialect ?? "duckdb"];
  const tables = { ...defaultTables, ...options.tables };
  for (const name of [tables.events, tables.values]) {
    if (!isTableName(name)) throw new Error(`\`${name}\` is not a table name (letters, digits and _, optionally qualified)`);
  }
  const diagnostics: Diagnostic[] = [];
  const rules: CompiledRule[] = [];
  const parts: { ctes: Cte[]; select: string }[] = [];
  const statements = "policies" in program ? program.policies.flatMap((policy) => policy.statements) : program;
  for (const [index, statement] of statements.entries()) {
    const builder = new RuleBuilder(dialect, tables, index, `r${index}_`);
    let sql: string | undefined;
    const own: Diagnostic[] = [];
    try {
      const select = builder.rule(statement);
      parts.push({ ctes: builder.ctes, select });
      sql = render(builder.ctes, dialect.ordered(select, "run, seq"));
    } catch (error) {
      if (!(error instanceof Inexpressible)) throw error;
      own.push(
        diagnostic("S0001", `rule \`${ruleId(statement)}\` cannot be compiled exactly to ${dialect.name}: ${error.message}`, {
          span: error.span,
          ...(options.file !== undefined ? { file: options.file } : {}),
          help: error.help,
        }),
      );
    }
    diagnostics.push(...own);
    rules.push({ index, policy: statement.policy, name: statement.name, statement, sql, diagnostics: own });
  }
  const sql = parts.length === 0 ? undefined : render(parts.flatMap((part) => part.ctes), dialect.ordered(parts.map((part) => part.select).join("\nUNION ALL\n"), "run, rule, seq"));
  return { dialect: dialect.name, rules, sql, diagnostics };
}

interface Cte {
  readonly name: string;
  readonly sql: string;
}

/**
 * Columns of one side of a join, each named: ClickHouse names a column of a query over three or
 * more tables by its qualified text (`t.run`) unless it is given a name.
 */
function named(table: string, columns: readonly string[]): string {
  return columns.map((column) => `${table}.${column} AS ${column}`).join(", ");
}

function render(ctes: readonly Cte[], select: string): string {
  if (ctes.length === 0) return `${select}\n`;
  return `WITH\n${ctes.map((cte) => `${cte.name} AS (\n${indent(cte.sql)}\n)`).join(",\n")}\n${select}\n`;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}

/**
 * A set of events with the values a pattern binds: a query whose rows are `run, part, seq, time`
 * and one column per statement variable (`x0`, `x1`, …, in the statement's order), distinct.
 */
interface Rows {
  readonly cte: string;
  /** Whether its rows carry a binding (the pattern uses the statement's variables). */
  readonly bound: boolean;
}

class RuleBuilder {
  readonly ctes: Cte[] = [];
  private variables: readonly string[] = [];
  private counter = 0;
  /** A limit's counted events, once its form is written. */
  private counted: Rows | undefined;
  private readonly atoms: ValueAtoms;

  constructor(
    private readonly dialect: Dialect,
    private readonly tables: SqlTables,
    private readonly ruleIndex: number,
    private readonly prefix: string,
  ) {
    this.atoms = new ValueAtoms({ dialect, values: tables.values, add: (name, sql) => this.add(name, sql) });
  }

  private add(name: string, sql: string): string {
    const full = `${this.prefix}${name}`;
    this.ctes.push({ name: full, sql });
    return full;
  }

  private fresh(name: string): string {
    return `${name}${this.counter++}`;
  }

  /** The final SELECT of a rule: its witnesses and its undecided runs. */
  rule(statement: CheckedStatement): string {
    this.variables = statement.variables;
    const events = this.stretches(statement.scope);
    const witnesses = this.form(statement, events);
    const selects: string[] = [];
    const problems: string[] = [];
    if (needsTime(statement)) problems.push(this.timeProblems());
    if (statement.form === "limit" && statement.measure.kind === "sum") problems.push(this.amountProblems(statement));
    const problem = problems.length === 0 ? undefined : this.add("problem", problems.length === 1 ? problems[0]! : problems.join("\nUNION ALL\n"));
    const firstProblem = problem === undefined ? undefined : this.add("first_problem", `SELECT run, min(seq) AS seq FROM ${problem} GROUP BY run`);
    const decided = firstProblem === undefined ? witnesses : this.add("decided", `SELECT w.* FROM ${witnesses} w WHERE NOT EXISTS (SELECT 1 FROM ${firstProblem} p WHERE p.run = w.run)`);
    selects.push(`SELECT ${this.ruleIndex} AS rule, run, seq, broken_by, ${this.dialect.nullOf("string")} AS problem, ${this.dialect.nullOf("bigint")} AS time, ${this.dialect.nullOf("bigint")} AS prev_time FROM ${decided}`);
    if (firstProblem !== undefined) {
      selects.push(
        `SELECT ${this.ruleIndex} AS rule, ${named("p", ["run", "seq"])}, ${this.dialect.nullOf("integer")} AS broken_by, ${named("p", ["problem", "time", "prev_time"])} FROM ${problem} p JOIN ${firstProblem} f ON f.run = p.run AND f.seq = p.seq`,
      );
    }
    return selects.join("\nUNION ALL\n");
  }

  // -------------------------------------------------------------------------------------------
  // Stretches

  /**
   * The events judged, with their stretch (`part`): every event in part 0 without a scope; with
   * one, the events of the judged stretches, `part` the position of the event that opened each.
   */
  private stretches(scope: CheckedScope | undefined): string {
    const E = this.tables.events;
    if (scope === undefined) return this.add("ev", `SELECT e.run, 0 AS part, e.seq, e.action, e.status, e.time FROM ${E} e`);
    const opens = this.predicate(scope.open, "e", undefined);
    if (scope.kind === "after" || scope.kind === "before") {
      const flagged = this.add("scope", `SELECT e.run, e.seq, e.action, e.status, e.time, CASE WHEN ${opens} THEN 1 ELSE 0 END AS q FROM ${E} e`);
      const first = this.add("scope_first", `SELECT run, min(seq) AS first FROM ${flagged} WHERE q = 1 GROUP BY run`);
      const keep = scope.kind === "after" ? "f.first IS NOT NULL AND s.seq >= f.first" : "f.first IS NULL OR s.seq < f.first";
      return this.add("ev", `SELECT s.run, 0 AS part, s.seq, s.action, s.status, s.time FROM ${flagged} s LEFT JOIN ${first} f ON f.run = s.run WHERE ${keep}`);
    }
    // `between` and `after … until`: outside, an opening event starts a stretch; inside, a closing
    // one ends it. An event that only opens sets the state inside, one that only closes sets it
    // outside, one that does both flips it: the state after an event is the value of the last
    // event that set it (outside before the first), flipped once per flip since.
    const closes = this.predicate(scope.close!, "e", undefined);
    const flags = this.add(
      "scope",
      `SELECT e.run, e.seq, e.action, e.status, e.time,\n` +
        `  CASE WHEN (${opens}) AND NOT (${closes}) THEN 1 WHEN (${closes}) AND NOT (${opens}) THEN 0 END AS sets,\n` +
        `  CASE WHEN (${opens}) AND (${closes}) THEN 1 ELSE 0 END AS flips\nFROM ${E} e`,
    );
    const running = "PARTITION BY run ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW";
    const groups = this.add("scope_groups", `SELECT s.*, count(sets) OVER (${running}) AS grp, sum(flips) OVER (${running}) AS flipped FROM ${flags} s`);
    const state = this.add(
      "scope_state",
      `SELECT g.*, ${this.dialect.mod("coalesce(max(sets) OVER (PARTITION BY run, grp), 0) + flipped - min(flipped - flips) OVER (PARTITION BY run, grp)", "2")} AS inside FROM ${groups} g`,
    );
    const opened = this.add(
      "scope_open",
      `SELECT t.*, max(CASE WHEN inside = 1 AND coalesce(before, 0) = 0 THEN seq END) OVER (${running}) AS part,\n` +
        `  max(seq) OVER (PARTITION BY run) AS last_seq\nFROM (SELECT s.*, lag(inside) OVER (PARTITION BY run ORDER BY seq) AS before FROM ${state} s) t`,
    );
    // Under `between`, the stretch still open at the end of the run is not judged.
    const unclosed =
      scope.kind === "between" ? ` AND NOT EXISTS (SELECT 1 FROM ${opened} l WHERE l.run = o.run AND l.seq = l.last_seq AND l.inside = 1 AND l.part = o.part)` : "";
    return this.add("ev", `SELECT o.run, o.part, o.seq, o.action, o.status, o.time FROM ${opened} o WHERE o.inside = 1${unclosed}`);
  }

  // -------------------------------------------------------------------------------------------
  // Forms

  /** The witnesses of the statement on the judged events: rows `run, seq, broken_by`. */
  private form(statement: CheckedStatement, events: string): string {
    switch (statement.form) {
      case "abs":
        return this.add("witness", `SELECT DISTINCT e.run, e.seq, ${this.dialect.nullOf("integer")} AS broken_by FROM ${events} e WHERE ${this.predicate(statement.pattern.formula, "e", undefined)}`);
      case "prec":
      case "resp": {
        const triggers = this.bindings(statement.first, events, "trigger");
        const answers = this.related(statement.second, events, triggers, "answer");
        const [aggregate, fails] = statement.form === "prec" ? ["min", "a.at >= t.seq"] : ["max", "a.at <= t.seq"];
        const keys = this.keys(answers);
        const firstOrLast = this.add("answer_at", `SELECT ${keys.join(", ")}, ${aggregate}(seq) AS at FROM ${answers.cte} GROUP BY ${keys.join(", ")}`);
        return this.add(
          "witness",
          `SELECT DISTINCT ${named("t", ["run", "seq"])}, ${this.dialect.nullOf("integer")} AS broken_by FROM ${triggers.cte} t LEFT JOIN ${firstOrLast} a ON ${this.joinOn("a", "t", answers)}\nWHERE a.at IS NULL OR ${fails}`,
        );
      }
      case "rslv": {
        const triggers = this.bindings(statement.first, events, "trigger");
        const answers = this.related(statement.second, events, triggers, "answer");
        const tKeys = this.keys(triggers);
        const aKeys = this.keys(answers);
        const lastTrigger = this.add("trigger_last", `SELECT ${tKeys.join(", ")}, max(seq) AS at FROM ${triggers.cte} GROUP BY ${tKeys.join(", ")}`);
        const lastAnswer = this.add("answer_last", `SELECT ${aKeys.join(", ")}, max(seq) AS at FROM ${answers.cte} GROUP BY ${aKeys.join(", ")}`);
        return this.add(
          "witness",
          `SELECT DISTINCT ${named("t", ["run", "seq"])}, ${this.dialect.nullOf("integer")} AS broken_by FROM ${triggers.cte} t\n` +
            `JOIN ${lastTrigger} l ON ${this.joinOn("l", "t", triggers)} AND l.at = t.seq\n` +
            `LEFT JOIN ${lastAnswer} a ON ${this.joinOn("a", "t", answers)}\nWHERE a.at IS NULL OR a.at < t.seq`,
        );
      }
      case "bresp": {
        const triggers = this.bindings(statement.first, events, "trigger");
        const answers = this.related(statement.second, events, triggers, "answer");
        const next = this.nextAfter(triggers, answers, "answer_next");
        const late = statement.window.unit === "events" ? `n.next_seq - n.seq > ${statement.window.size}` : `n.next_time - n.time > ${statement.window.size}`;
        return this.add("witness", `SELECT DISTINCT n.run, n.seq, ${this.dialect.nullOf("integer")} AS broken_by FROM ${next} n WHERE n.next_seq IS NULL OR ${late}`);
      }
      case "until": {
        const triggers = this.bindings(statement.trigger, events, "trigger");
        const resolutions = this.related(statement.resolve, events, triggers, "resolve");
        const bad = this.related(statement.bad, events, triggers, "bad");
        const nextResolution = this.nextAfter(triggers, resolutions, "resolve_next");
        const nextBad = this.nextAfter(triggers, bad, "bad_next");
        const same = ["run", "part", "seq", ...this.variableColumns()].map((c) => `b.${c} = r.${c}`).join(" AND ");
        return this.add(
          "witness",
          `SELECT ${named("b", ["run", "seq"])}, min(b.next_seq) AS broken_by FROM ${nextBad} b JOIN ${nextResolution} r ON ${same}\n` +
            `WHERE b.next_seq IS NOT NULL AND (r.next_seq IS NULL OR r.next_seq >= b.next_seq)\nGROUP BY b.run, b.seq`,
        );
      }
      case "limit":
        return this.limit(statement, events);
      case "always":
        return this.always(statement.body, events);
    }
  }

  /**
   * For each row of `triggers`, the first row of `answers` strictly after it with its binding:
   * `next_seq`, `next_time` (NULL when none). One window over both, answers ordered before
   * triggers at the same event, so that the frame after a trigger starts past its own event.
   */
  private nextAfter(triggers: Rows, answers: Rows, name: string): string {
    const variables = this.variableColumns();
    const answerVariables = answers.bound ? variables : variables.map(() => `${this.dialect.nullOf("string")}`);
    const columns = (xs: readonly string[]) => (xs.length === 0 ? "" : `, ${xs.join(", ")}`);
    const both = this.add(
      `${name}_rows`,
      `SELECT run, part, seq, time${columns(variables)}, 1 AS is_trigger FROM ${triggers.cte}\nUNION ALL\nSELECT run, part, seq, time${columns(answerVariables.map((x, i) => `${x}${answers.bound ? "" : ` AS ${variables[i]}`}`))}, 0 AS is_trigger FROM ${answers.cte}`,
    );
    const partition = answers.bound ? ["run", "part", ...variables] : ["run", "part"];
    const frame = `PARTITION BY ${partition.join(", ")} ORDER BY seq, is_trigger ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING`;
    return this.add(
      name,
      `SELECT * FROM (SELECT b.*, min(CASE WHEN is_trigger = 0 THEN seq END) OVER (${frame}) AS next_seq,\n` +
        `  min(CASE WHEN is_trigger = 0 THEN time END) OVER (${frame}) AS next_time FROM ${both} b) n WHERE n.is_trigger = 1`,
    );
  }

  private limit(statement: Extract<CheckedStatement, { form: "limit" }>, events: string): string {
    const counted = this.bindings(statement.pattern, events, "counted");
    this.counted = counted;
    const partition = `PARTITION BY ${this.keys(counted).join(", ")}`;
    const sofar = `${partition} ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`;
    // A window of d: what fell out of it is every earlier row at least d before (times never go back).
    const fallen = statement.per === undefined ? undefined : `${partition} ORDER BY time RANGE BETWEEN UNBOUNDED PRECEDING AND ${statement.per} PRECEDING`;
    if (statement.measure.kind === "count") {
      const inWindow = fallen === undefined ? `count(*) OVER (${sofar})` : `count(*) OVER (${sofar}) - count(*) OVER (${fallen})`;
      const measured = this.add("measured", `SELECT c.*, ${inWindow} AS total FROM ${counted.cte} c`);
      return this.add("witness", `SELECT DISTINCT run, seq, ${this.dialect.nullOf("integer")} AS broken_by FROM ${measured} WHERE total > ${statement.measure.maximum}`);
    }
    const decimal = this.dialect.decimal;
    if (decimal === undefined) {
      throw new Inexpressible(`${this.dialect.name} has no exact decimal numbers to sum \`of ${statement.measure.key.join(".")}\` with`, statement.measure.span, "check this rule with another engine (`--engine eval`), or on a dialect with exact decimals");
    }
    const maximum = decimalOf(statement.measure.maximum);
    const maximumText = maximum === undefined ? statement.measure.maximum : formatDecimal(maximum);
    if (!fitsDecimal(maximumText)) {
      throw new Inexpressible(`the maximum ${statement.measure.maximum} has more digits than an exact decimal of the engine holds (20 before the point, 18 after)`, statement.measure.span, "write the maximum with fewer digits");
    }
    const amounts = this.amounts(statement.measure.subject, statement.measure.key);
    const amount = `CASE WHEN a.n IS NOT NULL AND a.n = a.numbers THEN a.amount END`;
    const withAmount = this.add("amounted", `SELECT c.*, ${amount} AS amount FROM ${counted.cte} c LEFT JOIN ${amounts} a ON a.run = c.run AND a.seq = c.seq`);
    const zeroed = `coalesce(amount, ${decimal("'0'")})`;
    const inWindow = fallen === undefined ? `sum(${zeroed}) OVER (${sofar})` : `sum(${zeroed}) OVER (${sofar}) - coalesce(sum(${zeroed}) OVER (${fallen}), ${decimal("'0'")})`;
    const measured = this.add("measured", `SELECT m.*, ${inWindow} AS total FROM ${withAmount} m`);
    return this.add(
      "witness",
      `SELECT DISTINCT run, seq, ${this.dialect.nullOf("integer")} AS broken_by FROM ${measured} WHERE amount IS NULL OR total > ${decimal(this.dialect.literal(maximumText))}`,
    );
  }

  /**
   * Per event with values at the key: how many (`n`), how many are numbers at least zero whose
   * decimal the engine holds exactly (`numbers`), and their sum (`amount`).
   */
  private amounts(subject: Subject, key: readonly PathSegment[]): string {
    const decimal = this.dialect.decimal!;
    const fits = this.fitsDecimalSql("v.amount");
    return this.add(
      "amount",
      `SELECT v.run, v.seq, count(*) AS n, count(CASE WHEN ${fits} THEN 1 END) AS numbers, sum(CASE WHEN ${fits} THEN ${decimal("v.amount")} END) AS amount\n` +
        `FROM ${this.tables.values} v WHERE ${this.place("v", subject, key)} GROUP BY v.run, v.seq`,
    );
  }

  /** Whether an amount's text is a decimal the engine's DECIMAL(38, 18) holds exactly. */
  private fitsDecimalSql(column: string): string {
    // Digits only (`amount` is written without sign or exponent): at most 20 before the point and 18 after.
    const point = this.dialect.position(column, "'.'");
    return `(${column} IS NOT NULL AND ((${point} = 0 AND length(${column}) <= 20) OR (${point} BETWEEN 2 AND 21 AND length(${column}) - ${point} <= 18)))`;
  }

  /** The events on which a sum's amount is a number the engine cannot hold exactly: undecided. */
  private amountProblems(statement: Extract<CheckedStatement, { form: "limit" }>): string {
    if (statement.measure.kind !== "sum") throw new Error("internal error: not a sum");
    const fits = this.fitsDecimalSql("v.amount");
    // The limit's own counted events (its form is written before its problems).
    const counted = this.counted!;
    return (
      `SELECT DISTINCT c.run, c.seq, ${this.dialect.literal("amount")} AS problem, ${this.dialect.nullOf("bigint")} AS time, ${this.dialect.nullOf("bigint")} AS prev_time FROM ${counted.cte} c\n` +
      `WHERE EXISTS (SELECT 1 FROM ${this.tables.values} v WHERE v.run = c.run AND v.seq = c.seq AND ${this.place("v", statement.measure.subject, statement.measure.key)} AND v.amount IS NOT NULL AND NOT ${fits})`
    );
  }

  /** The events whose time a rule that measures time cannot use: none, or earlier than the one before. */
  private timeProblems(): string {
    const lit = this.dialect.literal;
    const timed = this.add("times", `SELECT run, seq, time, lag(time) OVER (PARTITION BY run ORDER BY seq) AS prev_time FROM ${this.tables.events}`);
    return (
      `SELECT run, seq, CASE WHEN time IS NULL THEN ${lit("no_time")} ELSE ${lit("time_backwards")} END AS problem, time, prev_time FROM ${timed}\n` +
      `WHERE time IS NULL OR time < prev_time`
    );
  }

  /** `always Θ`: the events where the body is false. Each `once`/`eventually` is a window over the column of its operand. */
  private always(body: Formula, events: string): string {
    // Layer 0: one column per maximal subformula without a temporal operator.
    const atoms: string[] = [];
    const columnOf = new Map<Formula, string>();
    const collect = (formula: Formula): void => {
      if (!isTemporal(formula)) {
        columnOf.set(formula, `a${atoms.length}`);
        atoms.push(`CASE WHEN ${this.predicate(formula, "e", undefined)} THEN 1 ELSE 0 END AS a${atoms.length}`);
        return;
      }
      if (formula.kind === "and" || formula.kind === "or") formula.operands.forEach(collect);
      else if (formula.kind === "not" || formula.kind === "once" || formula.kind === "eventually") collect(formula.operand);
    };
    collect(body);
    let layer = this.add("body0", `SELECT e.run, e.part, e.seq, e.time${atoms.length > 0 ? `, ${atoms.join(", ")}` : ""} FROM ${events} e`);
    const expression = (formula: Formula): string => {
      const column = columnOf.get(formula);
      if (column !== undefined) return `(p.${column} = 1)`;
      switch (formula.kind) {
        case "and":
          return `(${formula.operands.map(expression).join(" AND ")})`;
        case "or":
          return `(${formula.operands.map(expression).join(" OR ")})`;
        case "not":
          return `(NOT ${expression(formula.operand)})`;
        default:
          throw new Error(`internal error: \`${formula.kind}\` has no column`);
      }
    };
    // One layer per temporal node, innermost first.
    let temporal = 0;
    const visit = (formula: Formula): void => {
      if (columnOf.has(formula)) return;
      if (formula.kind === "and" || formula.kind === "or") formula.operands.forEach(visit);
      else if (formula.kind === "not") visit(formula.operand);
      else if (formula.kind === "once" || formula.kind === "eventually") {
        visit(formula.operand);
        const operand = expression(formula.operand);
        const frame =
          formula.kind === "once"
            ? "PARTITION BY p.run, p.part ORDER BY p.seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING"
            : "PARTITION BY p.run, p.part ORDER BY p.seq ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING";
        let value: string;
        if (formula.within === undefined) value = `coalesce(max(CASE WHEN ${operand} THEN 1 ELSE 0 END) OVER (${frame}), 0)`;
        else if (formula.kind === "once") value = `CASE WHEN max(CASE WHEN ${operand} THEN p.time END) OVER (${frame}) >= p.time - ${formula.within} THEN 1 ELSE 0 END`;
        else value = `CASE WHEN min(CASE WHEN ${operand} THEN p.time END) OVER (${frame}) <= p.time + ${formula.within} THEN 1 ELSE 0 END`;
        const column = `t${temporal++}`;
        layer = this.add(`body${temporal}`, `SELECT p.*, ${value} AS ${column} FROM ${layer} p`);
        columnOf.set(formula, column);
      }
    };
    visit(body);
    return this.add("witness", `SELECT p.run, p.seq, ${this.dialect.nullOf("integer")} AS broken_by FROM ${layer} p WHERE NOT ${expression(body)}`);
  }

  // -------------------------------------------------------------------------------------------
  // Patterns and bindings

  private variableColumns(): string[] {
    return this.variables.map((_, i) => `x${i}`);
  }

  /** The columns a set of rows is grouped by: its run, stretch and binding (when it has one). */
  private keys(rows: Rows): string[] {
    return rows.bound ? ["run", "part", ...this.variableColumns()] : ["run", "part"];
  }

  /** `a` joined to the trigger rows `t` on the keys of `rows` (`a`'s own). */
  private joinOn(a: string, t: string, rows: Rows): string {
    return this.keys(rows)
      .map((column) => `${a}.${column} = ${t}.${column}`)
      .join(" AND ");
  }

  /**
   * The rows of the events a pattern holds on, with each binding it gives: every variable use in
   * it binds (`k = $x`), so the bindings are enumerated from the values at the places it binds
   * (products under `and`, unions under `or`), as the engine's `PatternBinder` does.
   */
  private bindings(pattern: CheckedPattern, events: string, name: string): Rows {
    if (pattern.variables.length === 0) {
      return { cte: this.add(name, `SELECT DISTINCT e.run, e.part, e.seq, e.time FROM ${events} e WHERE ${this.predicate(pattern.formula, "e", undefined)}`), bound: false };
    }
    const columns = this.variableColumns();
    const generated = this.generate(pattern.formula, events);
    return { cte: this.add(name, `SELECT DISTINCT run, part, seq, time, ${columns.join(", ")} FROM (\n${indent(generated)}\n) g`), bound: true };
  }

  /** A query of `run, part, seq, time, x0…` for ψ(e, ν), ψ over `and`, `or`, `k = $x` and variable-free parts. */
  private generate(formula: Formula, events: string): string {
    const columns = this.variableColumns();
    if (!usesVariables(formula)) {
      return `SELECT e.run, e.part, e.seq, e.time, ${columns.map((c) => `${this.dialect.nullOf("string")} AS ${c}`).join(", ")} FROM ${events} e WHERE ${this.predicate(formula, "e", undefined)}`;
    }
    switch (formula.kind) {
      case "keyBind": {
        const index = this.variables.indexOf(formula.variable);
        const values = columns.map((c, i) => (i === index ? `v.vkey AS ${c}` : `${this.dialect.nullOf("string")} AS ${c}`));
        return `SELECT ${named("e", ["run", "part", "seq", "time"])}, ${values.join(", ")} FROM ${events} e JOIN ${this.tables.values} v ON v.run = e.run AND v.seq = e.seq AND ${this.place("v", formula.subject, formula.key)}`;
      }
      case "or":
        return formula.operands.map((operand) => this.generate(operand, events)).join("\nUNION ALL\n");
      case "and": {
        // The parts without variables filter the events; each part with variables is joined in.
        const plain = formula.operands.filter((operand) => !usesVariables(operand));
        const bound = formula.operands.filter(usesVariables);
        const filtered =
          plain.length === 0 ? events : this.add(this.fresh("filter"), `SELECT e.* FROM ${events} e WHERE ${plain.map((operand) => this.predicate(operand, "e", undefined)).join(" AND ")}`);
        const parts = bound.map((operand) => `(\n${indent(this.generate(operand, filtered))}\n)`);
        const aliases = parts.map((_, i) => `g${i}`);
        const joins = parts.map((part, i) => (i === 0 ? `${part} g0` : `JOIN ${part} g${i} ON g${i}.run = g0.run AND g${i}.part = g0.part AND g${i}.seq = g0.seq`));
        const values = columns.map((c) => (aliases.length === 1 ? `g0.${c} AS ${c}` : `coalesce(${aliases.map((a) => `${a}.${c}`).join(", ")}) AS ${c}`));
        return `SELECT ${named("g0", ["run", "part", "seq", "time"])}, ${values.join(", ")}\nFROM ${joins.join("\n")}`;
      }
      default:
        throw new Error(`internal error: a variable under \`${formula.kind}\` in a binding pattern`);
    }
  }

  /**
   * The rows of the events a later pattern of the form holds on. Without variables: the events it
   * holds on, which count for every binding. With variables that it only binds: its own bindings,
   * matched to the triggers' by equality. With `contains`: ψ(e, ν) tested for each binding ν the
   * triggers of the run (and stretch) have.
   */
  private related(pattern: CheckedPattern, events: string, triggers: Rows, name: string): Rows {
    if (pattern.variables.length === 0 || !usesContains(pattern.formula)) return this.bindings(pattern, events, name);
    const columns = this.variableColumns();
    const candidates = this.add(`${name}_candidates`, `SELECT DISTINCT run, part, ${columns.join(", ")} FROM ${triggers.cte}`);
    const binding = new Map(this.variables.map((variable, i) => [variable, `b.${columns[i]}`]));
    return {
      cte: this.add(
        name,
        `SELECT DISTINCT ${named("e", ["run", "part", "seq", "time"])}, ${named("b", columns)} FROM ${events} e JOIN ${candidates} b ON b.run = e.run AND b.part = e.part\n` +
          `WHERE ${this.predicate(pattern.formula, "e", binding)}`,
      ),
      bound: true,
    };
  }

  /**
   * A pattern as a boolean SQL expression on the event `e` (an alias with `run`, `seq`, `action`,
   * `status`): never NULL. With `binding`, the variables' value keys are those columns (ψ(e, ν));
   * without, `k = $x` holds when e has a value at k and `k contains $x` when it has a text there.
   */
  private predicate(formula: Formula, e: string, binding: ReadonlyMap<string, string> | undefined): string {
    const lit = this.dialect.literal;
    switch (formula.kind) {
      case "action":
        return formula.actions.length === 0 ? "(1 = 0)" : `${e}.action IN (${formula.actions.map(lit).join(", ")})`;
      case "status":
        return `(${e}.status IS NOT NULL AND ${e}.status = ${lit(formula.status)})`;
      case "and":
        return `(${formula.operands.map((operand) => this.predicate(operand, e, binding)).join(" AND ")})`;
      case "or":
        return `(${formula.operands.map((operand) => this.predicate(operand, e, binding)).join(" OR ")})`;
      case "not":
        return `(NOT ${this.predicate(formula.operand, e, binding)})`;
      case "once":
      case "eventually":
        throw new Error(`internal error: \`${formula.kind}\` is not a one-event predicate`);
      default:
        return this.atoms.atom(formula, e, binding);
    }
  }

  /** Where a key path's values are in the values table, for the row alias `v`. */
  private place(v: string, subject: Subject, key: readonly PathSegment[]): string {
    return this.atoms.place(v, subject, key);
  }
}

/** Whether a decimal's plain text fits DECIMAL(38, 18): at most 20 digits before the point and 18 after. */
function fitsDecimal(text: string): boolean {
  const [whole = "", fraction = ""] = text.replace(/^-/, "").split(".");
  return whole.length <= 20 && fraction.length <= 18;
}
