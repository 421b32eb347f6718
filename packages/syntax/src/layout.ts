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

export function concat(...parts: Layout[]): Layout {
  return { kind: "concat", parts };
}

export function group(...parts: Layout[]): Layout {
  return { kind: "group", body: concat(...parts) };
}

export function indent(...parts: Layout[]): Layout {
  return { kind: "indent", body: concat(...parts) };
}

export function ifBreak(broken: Layout, flat: Layout = ""): Layout {
  return { kind: "ifBreak", broken, flat };
}

export function join(separator: Layout, parts: readonly Layout[]): Layout {
  const result: Layout[] = [];
  parts.forEach((part, index) => {
    if (index > 0) result.push(separator);
    result.push(part);
  });
  return concat(...result);
}

type Mode = "flat" | "break";
interface Frame {
  readonly indentation: number;
  readonly mode: Mode;
  readonly layout: Layout;
}

const hardlines = new WeakMap<object, boolean>();

/** Whether a layout contains a hard line (memoized: layouts are immutable). */
function containsHardline(layout: Layout): boolean {
  if (typeof layout === "string") return false;
  const cached = hardlines.get(layout);
  if (cached !== undefined) return cached;
  let result: boolean;
  switch (layout.kind) {
    case "hardline":
      result = true;
      break;
    case "concat":
      result = layout.parts.some(containsHardline);
      break;
    case "group":
    case "indent":
      result = containsHardline(layout.body);
      break;
    case "ifBreak":
      result = containsHardline(layout.broken);
      break;
    default:
      result = false;
  }
  hardlines.set(layout, result);
  return result;
}

/** Whether `layout` in flat mode, followed by `rest`, fits in `width` columns before the next newline. */
function fits(layout: Layout, rest: readonly Frame[], width: number): boolean {
  const stack: { layout: Layout; mode: Mode }[] = [{ layout, mode: "flat" }];
  let restIndex = rest.length - 1;
  let remaining = width;
  while (remaining >= 0) {
    let frame = stack.pop();
    if (frame === undefined) {
      const next = rest[restIndex--];
      if (next === undefined) return true;
      frame = { layout: next.layout, mode: next.mode };
    }
    const current = frame.layout;
    if (typeof current === "string") {
      remaining -= current.length;
      continue;
    }
    switch (current.kind) {
      case "concat":
        for (let index = current.parts.length - 1; index >= 0; index--) stack.push({ layout: current.parts[index]!, mode: frame.mode });
        break;
      case "group":
        if (frame.mode === "flat" && containsHardline(current.body)) return false;
        stack.push({ layout: current.body, mode: frame.mode === "break" && containsHardline(current.body) ? "break" : "flat" });
        break;
      case "indent":
        stack.push({ layout: current.body, mode: frame.mode });
        break;
      case "line":
        if (frame.mode === "break") return true;
        remaining -= current.soft ? 0 : 1;
        break;
      case "hardline":
        return true;
      case "ifBreak":
        stack.push({ layout: frame.mode === "break" ? current.broken : current.flat, mode: frame.mode });
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
