import type { CodeLens } from "vscode-languageserver";
import { ruleId } from "@vigil/compiler";
import type { Analysis } from "../analysis.js";
import { openWitnessCommand, type OpenWitnessArguments } from "../protocol.js";
import { pathToUri } from "../uris.js";
import { verdictTitle, type VerdictTable } from "./verdicts.js";

/**
 * A lens above every rule with its verdict on the sample traces. A violated rule's lens opens the
 * trace at its first witness (the client implements `vigil.openWitness`); other lenses are labels.
 */
export function verdictLenses(analysis: Analysis, verdicts: VerdictTable | undefined): CodeLens[] {
  const lenses: CodeLens[] = [];
  for (const policy of analysis.compiled.syntax.policies) {
    for (const item of policy.items) {
      if (item.kind !== "RuleDecl" || item.name.recovered === true) continue;
      const range = analysis.positions.rangeOf(item.name.span);
      if (verdicts === undefined) {
        lenses.push({ range, command: { title: "not judged: the policy has errors", command: "" } });
        continue;
      }
      const ruleVerdicts = verdicts.get(ruleId({ policy: policy.name.text, name: item.name.text }));
      if (ruleVerdicts === undefined || ruleVerdicts.length === 0) continue;
      const title = verdictTitle(ruleVerdicts);
      const violated = ruleVerdicts.find((verdict) => !verdict.holds && verdict.firstWitness !== undefined);
      const line = violated?.firstWitness?.line;
      if (violated !== undefined && line !== undefined) {
        const target: OpenWitnessArguments = { uri: pathToUri(violated.trace), line: line - 1 };
        lenses.push({ range, command: { title, command: openWitnessCommand, arguments: [target] } });
      } else lenses.push({ range, command: { title, command: "" } });
    }
  }
  return lenses;
}
