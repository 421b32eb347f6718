import type { CstElement, CstNode, IToken } from "chevrotain";

/**
 * Small, total accessors over Chevrotain CST nodes. After error recovery a node may lack any of
 * its children, and tokens the parser invented ("inserted in recovery") have no position; these
 * helpers hide both so that the AST builder never has to.
 */

export function isToken(element: CstElement): element is IToken {
  return "image" in element;
}

/** Whether a token really occurs in the text (rather than being invented by recovery). */
export function isRealToken(token: IToken): boolean {
  return token.isInsertedInRecovery !== true && Number.isFinite(token.startOffset);
}

export function tokenEnd(token: IToken): number {
  return token.startOffset + token.image.length;
}

/** The real tokens stored under `key`, in source order. */
export function childTokens(node: CstNode | undefined, key: string): IToken[] {
  const children = node?.children[key];
  if (children === undefined) return [];
  return children.filter((child): child is IToken => isToken(child) && isRealToken(child));
}

export function childToken(node: CstNode | undefined, key: string): IToken | undefined {
  return childTokens(node, key)[0];
}

/** The sub-nodes stored under `key`, in source order. */
export function childNodes(node: CstNode | undefined, key: string): CstNode[] {
  const children = node?.children[key];
  if (children === undefined) return [];
  return children.filter((child): child is CstNode => !isToken(child));
}

export function childNode(node: CstNode | undefined, key: string): CstNode | undefined {
  return childNodes(node, key)[0];
}

export interface Extent {
  readonly start: number;
  readonly end: number;
}

const extents = new WeakMap<CstNode, Extent | null>();

/** The offsets from the first to just past the last real token under a node; undefined if it has none. */
export function extentOf(node: CstNode | undefined): Extent | undefined {
  if (node === undefined) return undefined;
  const cached = extents.get(node);
  if (cached !== undefined) return cached ?? undefined;
  let start = Infinity;
  let end = -Infinity;
  for (const children of Object.values(node.children)) {
    for (const child of children) {
      if (isToken(child)) {
        if (!isRealToken(child)) continue;
        start = Math.min(start, child.startOffset);
        end = Math.max(end, tokenEnd(child));
      } else {
        const inner = extentOf(child);
        if (inner === undefined) continue;
        start = Math.min(start, inner.start);
        end = Math.max(end, inner.end);
      }
    }
  }
  const extent = start <= end ? { start, end } : undefined;
  extents.set(node, extent ?? null);
  return extent;
}

/** Whether recovery touched a node: a re-synced node or an invented token anywhere beneath it. */
export function containsRecovery(node: CstNode | undefined): boolean {
  if (node === undefined) return false;
  if (node.recoveredNode === true) return true;
  for (const children of Object.values(node.children)) {
    for (const child of children) {
      if (isToken(child) ? !isRealToken(child) : containsRecovery(child)) return true;
    }
  }
  return false;
}
