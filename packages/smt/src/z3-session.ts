import type { Z3_ast, Z3_context, Z3_lbool, Z3_solver } from "z3-solver";
import type { Z3Api } from "./z3-runtime.js";

type Z3LowLevel = Z3Api["Z3"];

/**
 * Z3's three-valued answers (the values of z3-solver's `Z3_lbool` enum), as constants: importing
 * the enum would load z3-solver with this module, which loads it only on first use.
 */
export const Z3_L_FALSE = -1 as Z3_lbool;
export const Z3_L_UNDEF = 0 as Z3_lbool;
export const Z3_L_TRUE = 1 as Z3_lbool;

/**
 * One decision's Z3 objects, with explicit reference counting: every object created here is
 * released by `close`, which then deletes the context.
 */
export class Session {
  private readonly releases: (() => void)[] = [];

  /**
   * A session over a fresh context whose solver calls stop after `timeoutMs`, and, with `rlimit`,
   * after that many of Z3's resource units (a deterministic count of the solver's work, which
   * bounds its memory too: the same query stops at the same point on any machine).
   */
  static open(z3: Z3LowLevel, timeoutMs: number, rlimit?: number): Session {
    const config = z3.mk_config();
    z3.set_param_value(config, "timeout", String(timeoutMs));
    if (rlimit !== undefined) z3.set_param_value(config, "rlimit", String(rlimit));
    const context = z3.mk_context_rc(config);
    z3.del_config(config);
    return new Session(z3, context);
  }

  constructor(
    readonly z3: Z3LowLevel,
    readonly context: Z3_context,
  ) {}

  /** Runs a Z3 call and turns an error Z3 recorded into an exception. */
  run<T>(call: () => T): T {
    const value = call();
    const code = this.z3.get_error_code(this.context);
    if (code !== 0) throw new Error(this.z3.get_error_msg(this.context, code));
    return value;
  }

  solver(): Z3_solver {
    const solver = this.run(() => this.z3.mk_solver(this.context));
    this.z3.solver_inc_ref(this.context, solver);
    this.releases.push(() => this.z3.solver_dec_ref(this.context, solver));
    const params = this.z3.mk_params(this.context);
    this.z3.params_inc_ref(this.context, params);
    // Minimal cores: each names exactly the refuted conditions it needs (one, since ⟦τ⟧ is complete).
    this.z3.params_set_bool(this.context, params, this.z3.mk_string_symbol(this.context, "core.minimize"), true);
    this.run(() => this.z3.solver_set_params(this.context, solver, params));
    this.z3.params_dec_ref(this.context, params);
    return solver;
  }

  /**
   * Parses the query and asserts it, a piece of whole commands at a time into one parser context
   * (which keeps the declarations of the pieces before). z3-solver hands a string to Z3 on the
   * WebAssembly stack (20 MiB), so one string of a large query would overrun it.
   */
  load(solver: Z3_solver, body: string): void {
    const parser = this.run(() => this.z3.mk_parser_context(this.context));
    this.z3.parser_context_inc_ref(this.context, parser);
    try {
      for (const piece of commandPieces(body, pieceLength)) {
        // The piece is copied onto Z3's stack: a longer one would overrun it and corrupt the
        // runtime's memory (a WebAssembly trap), so it is refused here instead.
        if (piece.length > maximumPieceLength) throw new CommandTooLong(piece.length);
        const assertions = this.run(() => this.z3.parser_context_from_string(this.context, parser, piece));
        this.z3.ast_vector_inc_ref(this.context, assertions);
        try {
          const size = this.z3.ast_vector_size(this.context, assertions);
          for (let index = 0; index < size; index++) this.run(() => this.z3.solver_assert(this.context, solver, this.z3.ast_vector_get(this.context, assertions, index)));
        } finally {
          this.z3.ast_vector_dec_ref(this.context, assertions);
        }
      }
    } finally {
      this.z3.parser_context_dec_ref(this.context, parser);
    }
  }

  boolConstant(name: string): Z3_ast {
    const constant = this.run(() => this.z3.mk_const(this.context, this.z3.mk_string_symbol(this.context, name), this.z3.mk_bool_sort(this.context)));
    this.z3.inc_ref(this.context, constant);
    this.releases.push(() => this.z3.dec_ref(this.context, constant));
    return constant;
  }

  async check(solver: Z3_solver, assumptions: readonly Z3_ast[]): Promise<Z3_lbool> {
    const result = await this.z3.solver_check_assumptions(this.context, solver, [...assumptions]);
    const code = this.z3.get_error_code(this.context);
    if (code !== 0) throw new Error(this.z3.get_error_msg(this.context, code));
    return result;
  }

  /** Checks the solver's assertions together with `extra`, which is retracted afterwards. */
  async checkWith(solver: Z3_solver, extra: Z3_ast): Promise<Z3_lbool> {
    this.run(() => this.z3.solver_push(this.context, solver));
    try {
      this.run(() => this.z3.solver_assert(this.context, solver, extra));
      return await this.check(solver, []);
    } finally {
      this.z3.solver_pop(this.context, solver, 1);
    }
  }

  or(terms: readonly Z3_ast[]): Z3_ast {
    const disjunction = this.run(() => this.z3.mk_or(this.context, [...terms]));
    this.z3.inc_ref(this.context, disjunction);
    this.releases.push(() => this.z3.dec_ref(this.context, disjunction));
    return disjunction;
  }

  /** Which of `terms` evaluate to false in the model of the last satisfiable check. */
  falseInModel(solver: Z3_solver, terms: readonly Z3_ast[]): boolean[] {
    const model = this.run(() => this.z3.solver_get_model(this.context, solver));
    this.z3.model_inc_ref(this.context, model);
    try {
      return terms.map((term) => {
        const value = this.run(() => this.z3.model_eval(this.context, model, term, true));
        if (value === null) throw new Error("the model cannot evaluate a condition");
        return this.z3.get_bool_value(this.context, value) === Z3_L_FALSE;
      });
    } finally {
      this.z3.model_dec_ref(this.context, model);
    }
  }

  /** The values of integer and Boolean constants, by name, in the model of the last satisfiable check. */
  modelValues(solver: Z3_solver, constants: readonly { readonly name: string; readonly sort: "Int" | "Bool" }[]): (number | boolean)[] {
    const model = this.run(() => this.z3.solver_get_model(this.context, solver));
    this.z3.model_inc_ref(this.context, model);
    try {
      return constants.map(({ name, sort }) => {
        const constant = this.run(() =>
          this.z3.mk_const(this.context, this.z3.mk_string_symbol(this.context, name), sort === "Int" ? this.z3.mk_int_sort(this.context) : this.z3.mk_bool_sort(this.context)),
        );
        const value = this.run(() => this.z3.model_eval(this.context, model, constant, true));
        if (value === null) throw new Error(`the model has no value for ${name}`);
        return sort === "Int" ? Number(this.z3.get_numeral_string(this.context, value)) : this.z3.get_bool_value(this.context, value) === Z3_L_TRUE;
      });
    } finally {
      this.z3.model_dec_ref(this.context, model);
    }
  }

  reasonUnknown(solver: Z3_solver): string {
    return this.run(() => this.z3.solver_get_reason_unknown(this.context, solver));
  }

  /** The AST ids of the core's literals. */
  unsatCore(solver: Z3_solver): number[] {
    const core = this.run(() => this.z3.solver_get_unsat_core(this.context, solver));
    this.z3.ast_vector_inc_ref(this.context, core);
    try {
      const ids: number[] = [];
      const size = this.z3.ast_vector_size(this.context, core);
      for (let index = 0; index < size; index++) ids.push(this.z3.get_ast_id(this.context, this.z3.ast_vector_get(this.context, core, index)));
      return ids;
    } finally {
      this.z3.ast_vector_dec_ref(this.context, core);
    }
  }

  close(): void {
    for (const release of this.releases.reverse()) release();
    this.z3.del_context(this.context);
  }
}

/** The longest piece of a query handed to Z3's parser at once. */
const pieceLength = 2 ** 20;

/**
 * The longest piece Z3's parser is given: a single command longer than `pieceLength` is a piece of
 * its own, and the piece goes on the WebAssembly stack (20 MiB) as UTF-8 (queries are ASCII but for
 * the names in `|…|` symbols, up to three bytes a character): a quarter of the stack.
 */
export const maximumPieceLength = 5 * 2 ** 20 / 3;

/** A single SMT command too long to hand to Z3's parser (its stack). */
export class CommandTooLong extends Error {
  constructor(readonly length: number) {
    super(`a single SMT command of ${length.toLocaleString("en")} characters, more than Z3's parser takes at once (${Math.floor(maximumPieceLength).toLocaleString("en")})`);
  }
}

/**
 * SMT-LIB text cut into pieces of whole top-level commands, each at most `length` characters but
 * when a single command is longer (it is then a piece of its own). Parentheses are counted outside
 * `|symbols|`, `"strings"` and `; comments`.
 */
export function commandPieces(text: string, length: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  let depth = 0;
  /** Where the last complete command ended. */
  let boundary = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7c /* | */) {
      const end = text.indexOf("|", i + 1);
      i = end < 0 ? text.length : end;
    } else if (c === 0x22 /* " */) {
      // A string ends at a quote not doubled.
      let end = i + 1;
      for (;;) {
        end = text.indexOf('"', end);
        if (end < 0 || text.charCodeAt(end + 1) !== 0x22) break;
        end += 2;
      }
      i = end < 0 ? text.length : end;
    } else if (c === 0x3b /* ; */) {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
    } else if (c === 0x28 /* ( */) depth++;
    else if (c === 0x29 /* ) */) {
      depth--;
      if (depth === 0) {
        if (i + 1 - start > length && boundary > start) {
          pieces.push(text.slice(start, boundary));
          start = boundary;
        }
        if (i + 1 - start >= length) {
          pieces.push(text.slice(start, i + 1));
          start = i + 1;
        }
        boundary = i + 1;
      }
    }
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}

