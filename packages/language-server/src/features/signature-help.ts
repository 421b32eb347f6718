import type { SignatureHelp } from "vscode-languageserver";
import type { Form } from "@vigil/syntax";
import { formDescriptions, isForm } from "@vigil/compiler";
import { isComment, isPunctuation, lastTokenBefore, type Token } from "../tokens.js";

/**
 * Inside a form's parentheses, the form's parameters with the one under the cursor active:
 * `prec(` shows `prec(ψ trigger, ψ' required before)`. Read from the tokens, so it works while the
 * statement is still unfinished.
 */
export function signatureHelp(tokens: readonly Token[], offset: number): SignatureHelp | null {
  const call = enclosingFormCall(tokens, offset);
  if (call === undefined) return null;
  const description = formDescriptions[call.form];
  const parameters = description.parameters.map((parameter) => {
    const start = description.label.indexOf(parameter.label);
    return { label: [start, start + parameter.label.length] as [number, number], documentation: parameter.documentation };
  });
  return {
    signatures: [
      {
        label: description.label,
        documentation: { kind: "markdown", value: `${description.holdsWhen}\n\nFigure 5 (${description.figureName}): R_φ(e) = ${description.requirement}` },
        parameters,
      },
    ],
    activeSignature: 0,
    activeParameter: Math.min(call.argument, parameters.length - 1),
  };
}

/**
 * The form whose argument list holds the offset, and which argument the offset is in: walk back over
 * the tokens, skipping balanced brackets, to an unclosed `(` written right after a form keyword
 * (or after its bound: `bresp[5m]`, `limit[3 per 1m]`; `limit` is a keyword there, see `scanTokens`).
 * A declaration keyword ends the search.
 */
export function enclosingFormCall(tokens: readonly Token[], offset: number): { form: Exclude<Form, "always">; argument: number; open: number } | undefined {
  let index = lastTokenBefore(tokens, offset);
  let depth = 0;
  let commas = 0;
  for (; index >= 0; index--) {
    const token = tokens[index]!;
    if (isComment(token)) continue;
    if (token.kind === "keyword" && (token.keyword === "rule" || token.keyword === "pattern" || token.keyword === "policy")) return undefined;
    if (token.kind !== "punctuation") continue;
    switch (token.text) {
      case ")":
      case "}":
      case "]":
        depth++;
        break;
      case "{":
      case "[":
        if (depth === 0) return undefined;
        depth--;
        break;
      case ",":
        if (depth === 0) commas++;
        break;
      case "(": {
        if (depth > 0) {
          depth--;
          break;
        }
        const form = formBefore(tokens, index);
        if (form !== undefined) return { form, argument: commas, open: token.start };
        // A parenthesized sub-expression: the form's argument list is further out.
        commas = 0;
        break;
      }
      default:
        break;
    }
  }
  return undefined;
}

function formBefore(tokens: readonly Token[], open: number): Exclude<Form, "always"> | undefined {
  let index = open - 1;
  while (index >= 0 && isComment(tokens[index]!)) index--;
  let token = tokens[index];
  if (isPunctuation(token, "]")) {
    // `bresp[N](`, `limit[N per D](`: step back over the bound.
    while (index >= 0 && !isPunctuation(tokens[index], "[")) index--;
    token = tokens[index - 1];
  }
  // The `until` of a scope (`after ψ until (…)`) is no form.
  if (token?.kind !== "keyword" || token.keyword === undefined || !isForm(token.keyword) || token.keyword === "always" || token.scopeWord === true) return undefined;
  return token.keyword;
}
