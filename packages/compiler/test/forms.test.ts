import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formDescriptions, forms, responseDescriptions, scopeDescriptions, scopeKinds } from "../src/forms.js";
const root = join(import.meta.dirname, "..", "..", "..");

/** The words for each form (hovers, signature help, `vigilc draft --explain`) are the documentation's, word for word. */

const language = readFileSync(join(root, "docs/language.md"), "utf8");
const semantics = readFileSync(join(root, "docs/semantics.md"), "utf8");

describe.each(forms)("the form %s", (form) => {
  const description = formDescriptions[form];

  it("says when it holds as docs/language.md does", () => {
    expect(language).toContain(`| ${description.holdsWhen} |`);
  });

  it("gives its Figure 5 requirement and reading as docs/semantics.md does", () => {
    expect(semantics).toContain(`| \`${form === "bresp" ? "bresp[ℓ](ψ, ψ′)" : form === "limit" ? "limit[N](ψ)" : tableForm(form)}\` (${description.figureName}) | ${description.requirement} | ${description.reading} |`);
  });

  it("labels each parameter within its signature", () => {
    for (const parameter of description.parameters) expect(description.label).toContain(parameter.label);
  });
});

it("describes each response as docs/language.md does", () => {
  for (const [response, text] of Object.entries(responseDescriptions)) expect(language).toContain(`| \`${response}\` | ${text} |`);
});

it("describes each scope as docs/language.md's table does", () => {
  for (const kind of scopeKinds) {
    const description = scopeDescriptions[kind];
    expect(language).toContain(`| \`${description.label}\` | ${description.table} |`);
    expect(description.snippet.replace(/\$\{\d+:([^}]*)\}/g, "$1")).toBe(description.label);
  }
});

function tableForm(form: string): string {
  switch (form) {
    case "abs":
      return "abs(ψ)";
    case "until":
      return "until(ψ, ψ′, ψb)";
    case "always":
      return "always Θ";
    default:
      return `${form}(ψ, ψ′)`;
  }
}
