// The parts of the mvdan-sh API (GopherJS build of mvdan/sh's syntax package) that Vigil uses.
declare module "mvdan-sh" {
  interface Position {
    Offset(): number;
  }
  interface ShNode {
    Pos(): Position;
    End(): Position;
  }
  interface ShParser {
    Parse(source: string, name: string): ShNode;
  }
  interface ShSyntax {
    NewParser(...options: unknown[]): ShParser;
    KeepComments(keep: boolean): unknown;
    Variant(language: unknown): unknown;
    LangBash: unknown;
    Walk(node: ShNode, visit: (node: ShNode | null) => boolean): void;
    NodeType(node: ShNode): string;
  }
  const sh: { syntax: ShSyntax };
  export default sh;
}
