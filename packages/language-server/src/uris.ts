import { fileURLToPath, pathToFileURL } from "node:url";

/** The file system path of a `file:` URI; undefined for any other scheme (an unsaved buffer, say). */
export function uriToPath(uri: string): string | undefined {
  if (!uri.startsWith("file:")) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

export function pathToUri(path: string): string {
  return pathToFileURL(path).href;
}
