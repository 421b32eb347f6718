/** Declarations of install.mjs, for the TypeScript tests that call it. */

export declare const codeServerVersion: string;
export declare const nodeVersion: string;

export interface EditorTools {
  /** The cache folder of this pair of versions. */
  readonly directory: string;
  readonly nodePrefix: string;
  readonly codeServerPrefix: string;
  /** Node 24's executable. */
  readonly node: string;
  /** Node 24's package folder, with its headers (for native modules). */
  readonly nodeHeaders: string;
  /** code-server's entry script, run with Node 24. */
  readonly codeServer: string;
}

export declare function editorToolsDirectory(): string;
export declare function ensureEditorTools(log?: (line: string) => void): EditorTools;
export declare function environmentOutsideNpm(base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export declare function environmentWithNode24(tools: EditorTools, base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export declare function installedVersions(): { codeServerVersion: string; nodeVersion: string; seconds: number } | undefined;
