import { isAbsolute, resolve } from "node:path";

/**
 * Splits a glob written relative to a folder (`traces/*.jsonl`, `../data/**\/*.json`, an absolute
 * path) into the folder its static leading segments name and the rest, so that a file watcher can
 * be rooted at a real folder even when the glob climbs out of the one it is written in.
 */
export function splitGlob(folder: string, glob: string): { base: string; pattern: string } {
  const normalized = glob.replace(/\\/g, "/");
  const segments = normalized.split("/");
  const firstWild = segments.findIndex((segment) => /[*?[\]{}]/.test(segment));
  // A glob without wildcards names one file: watch that file in its folder.
  const staticCount = firstWild === -1 ? segments.length - 1 : firstWild;
  const leading = segments.slice(0, staticCount).join("/");
  const base = isAbsolute(normalized) ? resolve(leading === "" ? "/" : leading) : resolve(folder, leading === "" ? "." : leading);
  return { base, pattern: segments.slice(staticCount).join("/") };
}
