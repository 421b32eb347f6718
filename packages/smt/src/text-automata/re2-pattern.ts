import { Condition } from "./position-conditions.js";
import { complementOf, MAX_CODE_POINT, normalized, type Ranges } from "./unit-ranges.js";

/**
 * A pattern of the RE2 subset that `compileRegex` and `compileWildcard` write: alternation,
 * concatenation, `(?:…)` and `(?s:…)` groups, `*` `+` `?` `{n}` `{n,}` `{n,m}`, classes of code
 * points (`[…]`, `[^…]`, ranges, `\x{…}` escapes), `.`, and the assertions `\A` `\z` `\b` `\B`.
 */
export type Node =
  | { readonly t: "set"; readonly ranges: Ranges }
  | { readonly t: "cat"; readonly items: readonly Node[] }
  | { readonly t: "alt"; readonly items: readonly Node[] }
  | { readonly t: "rep"; readonly item: Node; readonly min: number; readonly max: number }
  | { readonly t: "assert"; readonly kind: Condition };

/** Reads a pattern of that subset into its tree, throwing on anything outside it. */
export class Re2Reader {
  private at = 0;
  constructor(private readonly text: string) {}

  read(): Node {
    const node = this.alternatives(false);
    if (this.at !== this.text.length) throw new Error(`unexpected \`${this.text[this.at]}\` at ${this.at}`);
    return node;
  }

  private alternatives(dotAll: boolean): Node {
    const items = [this.sequence(dotAll)];
    while (this.text[this.at] === "|") {
      this.at++;
      items.push(this.sequence(dotAll));
    }
    return items.length === 1 ? items[0]! : { t: "alt", items };
  }

  private sequence(dotAll: boolean): Node {
    const items: Node[] = [];
    while (this.at < this.text.length && this.text[this.at] !== "|" && this.text[this.at] !== ")") items.push(this.quantified(dotAll));
    return { t: "cat", items };
  }

  private quantified(dotAll: boolean): Node {
    let node = this.atom(dotAll);
    for (;;) {
      const c = this.text[this.at];
      let min: number;
      let max: number;
      if (c === "*") [min, max] = [0, Infinity];
      else if (c === "+") [min, max] = [1, Infinity];
      else if (c === "?") [min, max] = [0, 1];
      else if (c === "{" && /^\{\d+(,\d*)?\}/.test(this.text.slice(this.at))) {
        const match = /^\{(\d+)(,(\d*))?\}/.exec(this.text.slice(this.at))!;
        min = Number(match[1]);
        max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
        this.at += match[0].length - 1;
      } else return node;
      this.at++;
      // Greedy and lazy repetition match the same texts.
      if (this.text[this.at] === "?") this.at++;
      node = { t: "rep", item: node, min, max };
    }
  }

  private atom(dotAll: boolean): Node {
    const c = this.text[this.at]!;
    if (c === "(") {
      const flags = /^\(\?([a-zA-Z-]*):/.exec(this.text.slice(this.at));
      if (flags === null) throw new Error("a group of another kind than `(?:…)`");
      this.at += flags[0].length;
      const [on, off = ""] = flags[1]!.split("-");
      if (/[^s]/.test(on! + off)) throw new Error(`the flags \`${flags[1]}\``);
      const inner = this.alternatives(on!.includes("s") ? true : off.includes("s") ? false : dotAll);
      if (this.text[this.at] !== ")") throw new Error("an unclosed group");
      this.at++;
      return inner;
    }
    if (c === "[") return this.characterClass();
    if (c === ".") {
      this.at++;
      return { t: "set", ranges: dotAll ? [0, MAX_CODE_POINT] : complementOf([0x0a, 0x0a], MAX_CODE_POINT) };
    }
    if (c === "^" || c === "$") {
      this.at++;
      return { t: "assert", kind: c === "^" ? Condition.AtStart : Condition.AtEnd };
    }
    if (c === "\\") {
      const next = this.text[this.at + 1];
      const assertion = next === "A" ? Condition.AtStart : next === "z" ? Condition.AtEnd : next === "b" ? Condition.WordBoundary : next === "B" ? Condition.NotWordBoundary : undefined;
      if (assertion !== undefined) {
        this.at += 2;
        return { t: "assert", kind: assertion };
      }
    }
    const point = this.character();
    return { t: "set", ranges: [point, point] };
  }

  /** One character, as written: `\x{…}`, an escaped punctuation character, or itself. */
  private character(): number {
    const c = this.text[this.at]!;
    if (c === "\\") {
      const hex = /^\\x\{([0-9A-Fa-f]+)\}/.exec(this.text.slice(this.at));
      if (hex !== null) {
        this.at += hex[0].length;
        return parseInt(hex[1]!, 16);
      }
      const escaped = this.text.codePointAt(this.at + 1);
      if (escaped === undefined || /[A-Za-z0-9]/.test(String.fromCodePoint(escaped))) throw new Error(`the escape \`${this.text.slice(this.at, this.at + 2)}\``);
      this.at += 1 + (escaped > 0xffff ? 2 : 1);
      return escaped;
    }
    const point = this.text.codePointAt(this.at)!;
    this.at += point > 0xffff ? 2 : 1;
    return point;
  }

  private characterClass(): Node {
    this.at++;
    const negated = this.text[this.at] === "^";
    if (negated) this.at++;
    const ranges: [number, number][] = [];
    let first = true;
    while (this.text[this.at] !== "]" || first) {
      if (this.at >= this.text.length) throw new Error("an unclosed class");
      first = false;
      const low = this.character();
      if (this.text[this.at] === "-" && this.text[this.at + 1] !== "]") {
        this.at++;
        ranges.push([low, this.character()]);
      } else ranges.push([low, low]);
    }
    this.at++;
    const set = normalized(ranges);
    return { t: "set", ranges: negated ? complementOf(set, MAX_CODE_POINT) : set };
  }
}
