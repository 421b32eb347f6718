/**
 * A small Wadler-style layout algebra: the printer describes a document once, with the places it
 * may break, and `render` picks, group by group from the outside in, the flat layout when the rest
 * of the line fits in the width and the broken one otherwise.
 */

export type Layout =
  | string
  | { readonly kind: "concat"; readonly parts: readonly Layout[] }
  | { readonly kind: "group"; readonly body: Layout }
  | { readonly kind: "indent"; readonly body: Layout }
  /** A space when flat, a newline when broken (`soft`: nothing when flat). */
  | { readonly kind: "line"; readonly soft: boolean }
  /** Always a newline; forces every enclosing group to break. */
  | { readonly kind: "hardline" }
  | { readonly kind: "ifBreak"; readonly broken: Layout; readonly flat: Layout };

export const line: Layout = { kind: "line", soft: false };
export const softline: Layout = { kind: "line", soft: true };
export const hardline: Layout = { kind: "hardline" };

/**
 * The builders below take their parts as arrays when the count follows the input (one part per
 * rule, per value of a set): spreading an array into a call's arguments fails beyond about a
 * hundred thousand elements, and a policy can have more.
 */
export function concat(...parts: Layout[]): Layout {
  return { kind: "concat", parts };
}

/** `concat` of an array of any length. */
export function concatAll(parts: readonly Layout[]): Layout {
  return { kind: "concat", parts };
}

export function group(...parts: Layout[]): Layout {
  return { kind: "group", body: concatAll(parts) };
}

/** `group` of an array of any length. */
export function groupAll(parts: readonly Layout[]): Layout {
  return { kind: "group", body: concatAll(parts) };
}

export function indent(...parts: Layout[]): Layout {
  return { kind: "indent", body: concatAll(parts) };
}

/** `indent` of an array of any length. */
export function indentAll(parts: readonly Layout[]): Layout {
  return { kind: "indent", body: concatAll(parts) };
}

export function ifBreak(broken: Layout, flat: Layout = ""): Layout {
  return { kind: "ifBreak", broken, flat };
}

export function join(separator: Layout, parts: readonly Layout[]): Layout {
  const result: Layout[] = [];
  for (let index = 0; index < parts.length; index++) {
    if (index > 0) result.push(separator);
    result.push(parts[index]!);
  }
  return concatAll(result);
}

type Mode = "flat" | "break";
interface Frame {
  readonly indentation: number;
  readonly mode: Mode;
  readonly layout: Layout;
}

const hardlines = new WeakMap<object, boolean>();

/**
 * Whether a layout contains a hard line (memoized: layouts are immutable). Computed with an
 * explicit stack, children before parents, so that no layout is too deep or too wide for it.
 */
function containsHardline(root: Layout): boolean {
  if (typeof root === "string") return false;
  const known = hardlines.get(root);
  if (known !== undefined) return known;
  const children = (layout: Exclude<Layout, string>): readonly Layout[] => {
    switch (layout.kind) {
      case "concat":
        return layout.parts;
      case "group":
      case "indent":
        return [layout.body];
      case "ifBreak":
        return [layout.broken];
      default:
        return [];
    }
  };
  // Each entry is visited twice: first to schedule its children, then (`expanded`) to combine them.
  const stack: { layout: Exclude<Layout, string>; expanded: boolean }[] = [{ layout: root, expanded: false }];
  while (stack.length > 0) {
    const entry = stack[stack.length - 1]!;
    if (hardlines.has(entry.layout)) {
      stack.pop();
      continue;
    }
    const parts = children(entry.layout);
    if (!entry.expanded) {
      entry.expanded = true;
      for (const part of parts) if (typeof part !== "string" && !hardlines.has(part)) stack.push({ layout: part, expanded: false });
      continue;
    }
    stack.pop();
    hardlines.set(entry.layout, entry.layout.kind === "hardline" || parts.some((part) => typeof part !== "string" && hardlines.get(part) === true));
  }
  return hardlines.get(root) === true;
}

/**
 * Whether `layout` in flat mode, followed by `rest`, fits in `width` columns before the next
 * newline. A concatenation is walked with a cursor instead of being pushed whole, so that a check
 * costs about `width` steps even when the layout holds a set of a hundred thousand values.
 */
function fits(layout: Layout, rest: readonly Frame[], width: number): boolean {
  const stack: { parts: readonly Layout[]; next: number; mode: Mode }[] = [{ parts: [layout], next: 0, mode: "flat" }];
  let restIndex = rest.length - 1;
  let remaining = width;
  while (remaining >= 0) {
    const top = stack[stack.length - 1];
    let current: Layout;
    let mode: Mode;
    if (top === undefined) {
      const next = rest[restIndex--];
      if (next === undefined) return true;
      current = next.layout;
      mode = next.mode;
    } else if (top.next >= top.parts.length) {
      stack.pop();
      continue;
    } else {
      current = top.parts[top.next++]!;
      mode = top.mode;
    }
    if (typeof current === "string") {
      remaining -= current.length;
      continue;
    }
    switch (current.kind) {
      case "concat":
        stack.push({ parts: current.parts, next: 0, mode });
        break;
      case "group":
        if (mode === "flat" && containsHardline(current.body)) return false;
        stack.push({ parts: [current.body], next: 0, mode: mode === "break" && containsHardline(current.body) ? "break" : "flat" });
        break;
      case "indent":
        stack.push({ parts: [current.body], next: 0, mode });
        break;
      case "line":
        if (mode === "break") return true;
        remaining -= current.soft ? 0 : 1;
        break;
      case "hardline":
        return true;
      case "ifBreak":
        stack.push({ parts: [mode === "break" ? current.broken : current.flat], next: 0, mode });
        break;
    }
  }
  return false;
}

/** Lays a document out in `width` columns, indenting by `indentUnit` spaces per level. */
export function render(layout: Layout, width: number, indentUnit = 2): string {
  const output: string[] = [];
  let column = 0;
  const newline = (indentation: number): void => {
    // No line ends in spaces: drop the ones an indentation or a separator left behind.
    while (output.length > 0 && /^[ \t]*$/.test(output[output.length - 1]!)) output.pop();
    if (output.length > 0) output[output.length - 1] = output[output.length - 1]!.replace(/[ \t]+$/, "");
    output.push("\n", " ".repeat(indentation));
    column = indentation;
  };
  const stack: Frame[] = [{ indentation: 0, mode: "break", layout }];
  while (stack.length > 0) {
    const { indentation, mode, layout: current } = stack.pop()!;
    if (typeof current === "string") {
      output.push(current);
      column += current.length;
      continue;
    }
    switch (current.kind) {
      case "concat":
        for (let index = current.parts.length - 1; index >= 0; index--) stack.push({ indentation, mode, layout: current.parts[index]! });
        break;
      case "group": {
        const flat = !containsHardline(current.body) && fits(current.body, stack, width - column);
        stack.push({ indentation, mode: flat ? "flat" : "break", layout: current.body });
        break;
      }
      case "indent":
        stack.push({ indentation: indentation + indentUnit, mode, layout: current.body });
        break;
      case "line":
        if (mode === "break") newline(indentation);
        else if (!current.soft) {
          output.push(" ");
          column += 1;
        }
        break;
      case "hardline":
        newline(indentation);
        break;
      case "ifBreak":
        stack.push({ indentation, mode, layout: mode === "break" ? current.broken : current.flat });
        break;
    }
  }
  return output.join("");
}
