/**
 * A model's answer, read: the policy of its ```vigil block, and the requirements of its
 * ```unsupported block. Anything else in the answer is not read.
 */

export interface Unsupported {
  /** `NAME:LINE` as the model cited it. */
  readonly source: string;
  readonly requirement: string;
  readonly why: string;
}

export interface ReadAnswer {
  /** The text of the (last) ```vigil block; undefined when there is none. */
  readonly policy?: string;
  readonly unsupported: readonly Unsupported[];
  /** What is wrong with the answer's shape (no vigil block, a line of the unsupported block not understood). */
  readonly problems: readonly string[];
}

export function readAnswer(text: string): ReadAnswer {
  const blocks = [...text.matchAll(/^[ \t]*(`{3,}|~{3,})[ \t]*([\w-]*)[^\n]*\n([\s\S]*?)^[ \t]*\1[ \t]*$/gm)].map((match) => ({ language: match[2]!.toLowerCase(), body: match[3]! }));
  const problems: string[] = [];
  const policies = blocks.filter((block) => block.language === "vigil");
  if (policies.length === 0) problems.push("the answer has no ```vigil block: write the whole policy in one");
  else if (policies.length > 1) problems.push(`the answer has ${policies.length} \`\`\`vigil blocks: write the whole policy in one`);
  const unsupported: Unsupported[] = [];
  for (const block of blocks.filter((b) => b.language === "unsupported")) {
    for (const raw of block.body.split("\n")) {
      const line = raw.trim();
      if (line === "" || /^(none|nothing)\.?$/i.test(line.replace(/^[-*]\s*/, ""))) continue;
      const match = /^[-*]?\s*(\S+?:\d+(?:\s*[-–]\s*\d+)?):\s*(.+?)\s+(?:—|–|--| - )\s*(.+)$/.exec(line);
      if (match === null) {
        problems.push(`a line of the unsupported block is not \`- NAME:LINE: requirement — why\`: ${JSON.stringify(line)}`);
        continue;
      }
      unsupported.push({ source: match[1]!.replace(/\s+/g, ""), requirement: match[2]!, why: match[3]! });
    }
  }
  const last = policies.at(-1);
  return { ...(last !== undefined ? { policy: last.body } : {}), unsupported, problems };
}
