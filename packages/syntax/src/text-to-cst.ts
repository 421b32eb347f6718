import type { CstNode, IParserErrorMessageProvider, IRecognitionException, IToken, TokenType } from "chevrotain";
import { CstParser } from "./chevrotain.js";
import {
  ActionKeyword,
  AlwaysKeyword,
  AndKeyword,
  allTokens,
  BrespKeyword,
  Colon,
  Comma,
  Dot,
  Equals,
  ErrorKeyword,
  EventuallyKeyword,
  FalseKeyword,
  Identifier,
  ImpliesKeyword,
  InKeyword,
  LeftBrace,
  LeftBracket,
  LeftParen,
  NestingLimit,
  NotKeyword,
  NullKeyword,
  ListIndex,
  NumberLiteral,
  LessEquals,
  GreaterEquals,
  NotEquals,
  LessThan,
  GreaterThan,
  OkKeyword,
  OnceKeyword,
  OrKeyword,
  OutputKeyword,
  PatternKeyword,
  RegexToken,
  RightBrace,
  RightBracket,
  RightParen,
  RuleKeyword,
  SimpleFormKeyword,
  StatusKeyword,
  StringToken,
  Tilde,
  TrueKeyword,
  UntilKeyword,
  Variable,
} from "./tokens.js";

/**
 * The concrete-syntax parser of one declaration (`pattern …` or `rule …`): tokens to a Chevrotain
 * CST, with error recovery. The file's outline around declarations (`policy NAME { … }`) is found
 * by `declarations.ts`. The grammar is the one of `grammar/vigil.ebnf`, except that `implies` chains and prefix-operator chains are parsed as
 * loops (and folded to the right when the AST is built) so that only parentheses make the parser
 * recurse.
 *
 * Chevrotain's own error messages are token-type dumps, so the message provider below does not
 * write prose: it records what was expected, and in which rule, as a small JSON payload that
 * `syntax-errors.ts` turns into a human message with the surrounding context.
 */

/** What the parser knew when it failed; serialized into the exception's message. */
export interface ParseErrorPayload {
  readonly kind: "mismatch" | "noViableAlternative" | "earlyExit" | "notAllInputParsed";
  readonly rule: string;
  /** For `mismatch`: the token type's name that was expected. */
  readonly expected?: string;
}

/** The words a scope starts with (contextual, like `matches`). */
export const scopeWords: readonly string[] = ["after", "before", "between"];

/** Whether a token is a scope's first word. */
export function isScopeWord(token: IToken): boolean {
  return token.tokenType === Identifier && scopeWords.includes(token.image);
}

function payload(value: ParseErrorPayload): string {
  return JSON.stringify(value);
}

const errorMessageProvider: IParserErrorMessageProvider = {
  buildMismatchTokenMessage({ expected, ruleName }: { expected: TokenType; ruleName: string }): string {
    return payload({ kind: "mismatch", rule: ruleName, expected: expected.name });
  },
  buildNotAllInputParsedMessage({ ruleName }: { ruleName: string }): string {
    return payload({ kind: "notAllInputParsed", rule: ruleName });
  },
  buildNoViableAltMessage({ ruleName }: { ruleName: string }): string {
    return payload({ kind: "noViableAlternative", rule: ruleName });
  },
  buildEarlyExitMessage({ ruleName }: { ruleName: string }): string {
    return payload({ kind: "earlyExit", rule: ruleName });
  },
};

/** Reads back the payload of a parser exception's message (undefined if it is not one of ours). */
export function readErrorPayload(message: string): ParseErrorPayload | undefined {
  try {
    const value: unknown = JSON.parse(message);
    if (typeof value === "object" && value !== null && "kind" in value && "rule" in value) return value as ParseErrorPayload;
  } catch {
    // Not a payload: fall through.
  }
  return undefined;
}

export class VigilCstParser extends CstParser {
  constructor() {
    super(allTokens as TokenType[], { recoveryEnabled: true, maxLookahead: 2, errorMessageProvider });
    this.performSelfAnalysis();
  }

  public readonly item = this.RULE("item", () => {
    this.OR([{ ALT: () => this.SUBRULE(this.patternDecl) }, { ALT: () => this.SUBRULE(this.ruleDecl) }]);
  });

  public readonly patternDecl = this.RULE("patternDecl", () => {
    this.CONSUME(PatternKeyword);
    this.CONSUME(Identifier);
    this.CONSUME(Equals);
    this.SUBRULE(this.expr);
  });

  public readonly ruleDecl = this.RULE("ruleDecl", () => {
    this.CONSUME(RuleKeyword);
    this.CONSUME(Identifier);
    this.CONSUME(Colon);
    this.SUBRULE(this.statement);
  });

  public readonly statement = this.RULE("statement", () => {
    this.OR([
      {
        ALT: () => {
          this.CONSUME(AlwaysKeyword, { LABEL: "form" });
          this.SUBRULE(this.expr);
        },
      },
      {
        ALT: () => {
          this.CONSUME(BrespKeyword, { LABEL: "form" });
          this.OPTION(() => this.SUBRULE(this.bound));
          this.SUBRULE(this.operandList);
        },
      },
      {
        ALT: () => {
          this.CONSUME(SimpleFormKeyword, { LABEL: "form" });
          // Taken only so that the checker can say the form has no bound (V1009).
          this.OPTION3(() => this.SUBRULE3(this.bound));
          this.SUBRULE2(this.operandList);
        },
      },
      {
        // `limit[N](ψ)`: a contextual word, so that `limit` stays free as a name (an argument is
        // often called that). Any word before `[` or `(` is read here, so that a misspelled form
        // is reported by name.
        GATE: () => this.LA(2).tokenType === LeftBracket || this.LA(2).tokenType === LeftParen,
        ALT: () => {
          this.CONSUME(Identifier, { LABEL: "form" });
          this.OPTION2(() => this.SUBRULE2(this.bound));
          this.SUBRULE3(this.operandList);
        },
      },
    ]);
  });

  /**
   * `after ψ`, `before ψ`, `between ψ and ψ'`, `after ψ until ψ'`: a statement's scope, whose tokens
   * the outline splits off by position (`splitScope`) and which is parsed on its own, so that a
   * mistake in the statement is recovered from as before. `between`'s two patterns are read as one
   * expression and split at its first top-level `and` (so a first pattern with `and` in it is
   * parenthesized or named); which word takes `until` is the AST's business.
   */
  public readonly scope = this.RULE("scope", () => {
    this.CONSUME(Identifier, { LABEL: "scopeWord" });
    this.SUBRULE(this.expr, { LABEL: "open" });
    this.OPTION(() => {
      this.CONSUME(UntilKeyword);
      this.SUBRULE2(this.expr, { LABEL: "close" });
    });
  });

  /**
   * `[N]`, `[5m]`, `[N per 5m]`, `[N of KEY per 5m]`: how far a form or a temporal operator looks, or
   * what a limit allows. `of` and `per` are contextual words. An identifier or a string is accepted
   * as a value too so that the checker can say why it is wrong (V1009, V1016).
   */
  public readonly bound = this.RULE("bound", () => {
    this.CONSUME(LeftBracket);
    this.OR([
      { ALT: () => this.CONSUME(NumberLiteral, { LABEL: "value" }) },
      { ALT: () => this.CONSUME(Identifier, { LABEL: "value" }) },
      { ALT: () => this.CONSUME(StringToken, { LABEL: "value" }) },
    ]);
    this.OPTION({
      GATE: () => this.LA(1).image === "of",
      DEF: () => {
        this.CONSUME2(Identifier, { LABEL: "ofWord" });
        this.SUBRULE(this.keyPath, { LABEL: "of" });
      },
    });
    this.OPTION2({
      GATE: () => this.LA(1).image === "per",
      DEF: () => {
        this.CONSUME3(Identifier, { LABEL: "perWord" });
        this.OR2([
          { ALT: () => this.CONSUME2(NumberLiteral, { LABEL: "per" }) },
          { ALT: () => this.CONSUME4(Identifier, { LABEL: "per" }) },
          { ALT: () => this.CONSUME2(StringToken, { LABEL: "per" }) },
        ]);
      },
    });
    this.CONSUME(RightBracket);
  });

  public readonly operandList = this.RULE("operandList", () => {
    this.CONSUME(LeftParen);
    this.SUBRULE(this.expr);
    this.MANY(() => {
      this.CONSUME(Comma);
      this.SUBRULE2(this.expr);
    });
    this.OPTION(() => this.CONSUME2(Comma, { LABEL: "trailingComma" }));
    this.CONSUME(RightParen);
  });

  public readonly expr = this.RULE("expr", () => {
    this.SUBRULE(this.orExpr);
    this.MANY(() => {
      this.CONSUME(ImpliesKeyword);
      this.SUBRULE2(this.orExpr);
    });
  });

  public readonly orExpr = this.RULE("orExpr", () => {
    this.SUBRULE(this.andExpr);
    this.MANY(() => {
      this.CONSUME(OrKeyword);
      this.SUBRULE2(this.andExpr);
    });
  });

  public readonly andExpr = this.RULE("andExpr", () => {
    this.SUBRULE(this.unary);
    this.MANY(() => {
      this.CONSUME(AndKeyword);
      this.SUBRULE2(this.unary);
    });
  });

  public readonly unary = this.RULE("unary", () => {
    this.MANY(() => {
      this.OR([
        { ALT: () => this.CONSUME(NotKeyword, { LABEL: "prefixOperator" }) },
        {
          ALT: () => {
            this.CONSUME(OnceKeyword, { LABEL: "prefixOperator" });
            this.OPTION(() => this.SUBRULE(this.bound, { LABEL: "window" }));
          },
        },
        {
          ALT: () => {
            this.CONSUME(EventuallyKeyword, { LABEL: "prefixOperator" });
            this.OPTION2(() => this.SUBRULE2(this.bound, { LABEL: "window" }));
          },
        },
      ]);
    });
    this.SUBRULE(this.primary);
  });

  public readonly primary = this.RULE("primary", () => {
    this.OR([
      {
        ALT: () => {
          this.CONSUME(LeftParen);
          this.SUBRULE(this.expr);
          this.CONSUME(RightParen);
        },
      },
      { ALT: () => this.SUBRULE(this.actionIn) },
      { ALT: () => this.SUBRULE(this.statusIs) },
      // The key atoms come before the pattern reference: with two tokens of lookahead, `output` or an
      // identifier followed by `in`, `~`, `=`, `.` or a word (`matches`, `contains`) starts an atom,
      // and any other identifier names a pattern.
      { ALT: () => this.SUBRULE(this.keyAtom) },
      { ALT: () => this.CONSUME(Identifier, { LABEL: "patternName" }) },
      { ALT: () => this.CONSUME(NestingLimit) },
    ]);
  });

  public readonly actionIn = this.RULE("actionIn", () => {
    this.CONSUME(ActionKeyword);
    this.CONSUME(InKeyword);
    this.CONSUME(LeftBrace);
    this.OPTION(() => {
      this.SUBRULE(this.symbol);
      this.MANY(() => {
        this.CONSUME(Comma);
        this.SUBRULE2(this.symbol);
      });
    });
    this.OPTION2(() => this.CONSUME2(Comma, { LABEL: "trailingComma" }));
    this.CONSUME(RightBrace);
  });

  public readonly symbol = this.RULE("symbol", () => {
    this.OR([
      { ALT: () => this.CONSUME(Identifier, { LABEL: "name" }) },
      { ALT: () => this.CONSUME(StringToken, { LABEL: "name" }) },
    ]);
  });

  public readonly statusIs = this.RULE("statusIs", () => {
    this.CONSUME(StatusKeyword);
    this.CONSUME(Equals);
    this.OR([
      { ALT: () => this.CONSUME(OkKeyword, { LABEL: "status" }) },
      { ALT: () => this.CONSUME(ErrorKeyword, { LABEL: "status" }) },
    ]);
  });

  /**
   * A condition on a key: its path, or `every(PATH)`, `some(PATH)` or `count(PATH)` (contextual words:
   * an identifier followed by `(`, which no key path is), then the operator and its operand.
   */
  public readonly keyAtom = this.RULE("keyAtom", () => {
    this.OR([
      {
        ALT: () => {
          this.CONSUME(Identifier, { LABEL: "quantifier" });
          this.CONSUME(LeftParen);
          this.SUBRULE(this.keyPath);
          this.CONSUME(RightParen);
        },
      },
      { ALT: () => this.SUBRULE2(this.keyPath) },
    ]);
    this.OR2([
      {
        ALT: () => {
          this.CONSUME(InKeyword);
          this.SUBRULE(this.valueSet);
        },
      },
      {
        ALT: () => {
          this.CONSUME(Tilde);
          this.CONSUME(StringToken);
        },
      },
      {
        // `= $x` binds; `= 5` compares.
        ALT: () => {
          this.CONSUME(Equals);
          this.OR3([{ ALT: () => this.CONSUME(Variable) }, { ALT: () => this.CONSUME(NumberLiteral, { LABEL: "number" }) }]);
        },
      },
      {
        ALT: () => {
          this.OR4([
            { ALT: () => this.CONSUME(LessEquals, { LABEL: "comparison" }) },
            { ALT: () => this.CONSUME(GreaterEquals, { LABEL: "comparison" }) },
            { ALT: () => this.CONSUME(NotEquals, { LABEL: "comparison" }) },
            { ALT: () => this.CONSUME(LessThan, { LABEL: "comparison" }) },
            { ALT: () => this.CONSUME(GreaterThan, { LABEL: "comparison" }) },
          ]);
          this.CONSUME2(NumberLiteral, { LABEL: "number" });
        },
      },
      {
        // `matches /…/` and `contains $x`: contextual words, so that neither is reserved (an argument
        // may be called `contains`). Which word goes with which operand is checked on the tree.
        ALT: () => {
          this.CONSUME2(Identifier, { LABEL: "operatorWord" });
          this.OR5([{ ALT: () => this.CONSUME(RegexToken) }, { ALT: () => this.CONSUME2(Variable) }]);
        },
      },
    ]);
  });

  /** `output`, `output.a.b`, or an argument's key path `a.b`. */
  public readonly keyPath = this.RULE("keyPath", () => {
    this.OR([{ ALT: () => this.CONSUME(OutputKeyword) }, { ALT: () => this.SUBRULE(this.keySegment) }]);
    this.MANY(() => {
      this.CONSUME(Dot);
      this.SUBRULE2(this.keySegment);
    });
  });

  /** A name, or a list index (`argv.0`); the first segment of a path is a name (the AST builder says so of an index there). */
  public readonly keySegment = this.RULE("keySegment", () => {
    this.OR([
      { ALT: () => this.CONSUME(Identifier, { LABEL: "name" }) },
      { ALT: () => this.CONSUME(StringToken, { LABEL: "name" }) },
      { ALT: () => this.CONSUME(ListIndex, { LABEL: "index" }) },
    ]);
  });

  public readonly valueSet = this.RULE("valueSet", () => {
    this.CONSUME(LeftBrace);
    this.OPTION(() => {
      this.SUBRULE(this.value);
      this.MANY(() => {
        this.CONSUME(Comma);
        this.SUBRULE2(this.value);
      });
    });
    this.OPTION2(() => this.CONSUME2(Comma, { LABEL: "trailingComma" }));
    this.CONSUME(RightBrace);
  });

  public readonly value = this.RULE("value", () => {
    this.OR([
      { ALT: () => this.CONSUME(StringToken, { LABEL: "literal" }) },
      { ALT: () => this.CONSUME(NumberLiteral, { LABEL: "literal" }) },
      { ALT: () => this.CONSUME(TrueKeyword, { LABEL: "literal" }) },
      { ALT: () => this.CONSUME(FalseKeyword, { LABEL: "literal" }) },
      { ALT: () => this.CONSUME(NullKeyword, { LABEL: "literal" }) },
      // Not a value: read so that `key in {pytest}` gets one precise error (V0007) with a fix.
      { ALT: () => this.CONSUME(Identifier, { LABEL: "bareWord" }) },
    ]);
  });
}

/** The token types an expression can start with (used to word "expected `,` or `)`" messages). */
export const expressionStartTokens: readonly TokenType[] = [
  LeftParen,
  NotKeyword,
  OnceKeyword,
  EventuallyKeyword,
  ActionKeyword,
  StatusKeyword,
  OutputKeyword,
  Identifier,
  StringToken,
];

let sharedParser: VigilCstParser | undefined;

/**
 * The parser instance. Building one analyses the whole grammar, so it is built once and reused;
 * assigning `input` resets all of its state between parses.
 */
export function cstParser(): VigilCstParser {
  sharedParser ??= new VigilCstParser();
  return sharedParser;
}

export interface CstParseResult {
  readonly cst: CstNode | undefined;
  readonly errors: readonly IRecognitionException[];
}

/** Parses the tokens of one declaration (comments already removed) into its CST. */
export function declarationToCst(tokens: IToken[]): CstParseResult {
  const parser = cstParser();
  parser.input = tokens;
  const cst = parser.item();
  const errors = parser.errors;
  // Drop the token vector so the shared parser does not keep the last file alive.
  parser.input = [];
  return { cst, errors };
}

/** Parses the tokens of a statement's scope (split off by `splitScope`) into its CST. */
export function scopeToCst(tokens: IToken[]): CstParseResult {
  const parser = cstParser();
  parser.input = tokens;
  const cst = parser.scope();
  const errors = parser.errors;
  parser.input = [];
  return { cst, errors };
}

/** Used by the grammar documentation test: the rule names the EBNF must mention. */
export function grammarRuleNames(): string[] {
  return Object.keys(cstParser().getGAstProductions());
}
