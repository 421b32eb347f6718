import { closestName } from "@vigil/diagnostics";
import type { DialectName } from "@vigil/sql";
import { Option, type Command } from "commander";
import { ruleId } from "@vigil/compiler";
import type { CommandContext } from "./context.js";
import { InputError, loadCompiler, plural } from "./shared.js";

/**
 * `vigilc sql POLICY [--dialect D]`: the policy as SQL over the canonical events table and its
 * values table (`vigilc export`), for the engine the data is in. One query for the whole policy,
 * or one rule's (`--rule`). A rule the dialect cannot express exactly is reported (S0001), never
 * approximated, and the command exits 2: the SQL printed does not check the whole policy.
 */
export function registerSql(program: Command, context: CommandContext): void {
  program
    .command("sql")
    .description("print the SQL that judges every run of the events table against the policy (one row per witness)")
    .argument("<policy>", "a .vigil file")
    .addOption(new Option("-d, --dialect <dialect>", "the SQL engine").choices(dialects).default("duckdb"))
    .option("-r, --rule <name>", "only this rule's query (NAME or POLICY.NAME)")
    .option("--table <name>", "the events table", "events")
    .option("--values-table <name>", "the values table", "event_values")
    .action(async (policyFile: string, options: SqlOptions) => {
      context.exitCode = await printSql(context, policyFile, options);
    });
}

type SqlOptions = { dialect: DialectName; rule?: string; table: string; valuesTable: string };

// Written out here so that registering the command does not load @vigil/sql (and embedded DuckDB); the type keeps it whole.
const dialects = ["duckdb", "postgres", "sqlite", "clickhouse", "trino", "spark", "bigquery", "snowflake"] as const satisfies readonly DialectName[];

async function printSql(context: CommandContext, policyFile: string, options: SqlOptions): Promise<number> {
  const { io, printDiagnostics, reportUnrendered } = context;
  const { compileSql, isTableName } = await import("@vigil/sql");
  for (const [flag, name] of [["--table", options.table], ["--values-table", options.valuesTable]] as const) {
    if (!isTableName(name)) {
      io.stderr(`error: ${flag} \`${name}\` is not a table name: letters, digits and \`_\`, optionally qualified (\`schema.table\`, \`catalog.schema.table\`)\n`);
      throw new InputError();
    }
  }
  const source = await context.readText(policyFile, "policy");
  const { compile } = await loadCompiler();
  const compiled = compile(source, { file: policyFile });
  const errors = compiled.diagnostics.filter((d) => d.severity === "error");
  printDiagnostics(errors);
  reportUnrendered();
  if (!compiled.ok) {
    io.stderr(`error: the policy \`${policyFile}\` has ${plural(errors.length, "error")}; no SQL was written\n`);
    throw new InputError();
  }
  const statements = compiled.program.policies.flatMap((p) => p.statements);
  const chosen = statements.filter((s) => options.rule === undefined || s.name === options.rule || ruleId(s) === options.rule);
  if (chosen.length === 0) {
    if (options.rule === undefined) io.stderr(`error: the policy \`${policyFile}\` declares no rule; no SQL was written\n`);
    else {
      const near = closestName(options.rule, statements.flatMap((s) => [s.name, ruleId(s)]));
      io.stderr(`error: no rule named \`${options.rule}\` in \`${policyFile}\`${near !== undefined ? `; did you mean \`${near}\`?` : ""}\n`);
    }
    throw new InputError();
  }
  // Compiled whole, so that a rule's number (the `rule` column) is the same with --rule or without.
  const sql = compileSql(statements, { dialect: options.dialect, tables: { events: options.table, values: options.valuesTable }, file: policyFile });
  const rules = sql.rules.filter((rule) => chosen.includes(rule.statement));
  const diagnostics = rules.flatMap((rule) => rule.diagnostics);
  printDiagnostics(diagnostics);
  reportUnrendered();
  const query = options.rule !== undefined ? rules[0]!.sql : sql.sql;
  if (query !== undefined) {
    const listed = rules.filter((rule) => rule.sql !== undefined).map((rule) => `--   ${rule.index}  ${ruleId(rule)}`);
    io.stdout(
      `-- ${policyFile} as ${options.dialect} SQL over ${options.table} and ${options.valuesTable} (vigilc export).\n` +
        `-- One row per witness: rule, run, seq, broken_by (until); an undecided rule has a problem and its event.\n` +
        `-- rule:\n${listed.join("\n")}\n${query}`,
    );
  }
  if (diagnostics.length > 0) {
    io.stderr(`error: ${plural(diagnostics.length, "rule")} cannot be written exactly in ${options.dialect} SQL and ${diagnostics.length === 1 ? "is" : "are"} left out${query === undefined ? "; no SQL was written" : ""}\n`);
    return 2;
  }
  return 0;
}
