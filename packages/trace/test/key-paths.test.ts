import { describe, expect, it } from "vitest";
import { keyPathDisplay, keyPathId, keyPathNames, lookUpKey, signatureFromToolSchemas, signatureOf, signatureToJson, valuesAtPath, type JsonValue, type TraceEvent } from "@vigil/trace";

/** Key paths with list indexes (`argv.0`): what they reach, how they are named, and where they stand in Σ. */

const args = {
  argv: ["rm", "-rf", "/"],
  m: [[1, 2], [3]],
  items: [{ id: "a", tags: ["x", "y"] }, { id: "b", tags: ["z"] }, { id: "c" }],
  o: { "0": "member zero", list: [{ deep: [10, 20] }] },
  s: "text",
  empty: [],
} satisfies Record<string, JsonValue>;

describe("valuesAtPath with list indexes", () => {
  it("takes one element of a list, as it is, and flattens the values at the end", () => {
    expect(valuesAtPath(args, ["argv", 0])).toEqual(["rm"]);
    expect(valuesAtPath(args, ["argv", 2])).toEqual(["/"]);
    expect(valuesAtPath(args, ["argv"])).toEqual(["rm", "-rf", "/"]);
    // A nested list: the index picks the inner list, whose elements are the values.
    expect(valuesAtPath(args, ["m", 0])).toEqual([1, 2]);
    expect(valuesAtPath(args, ["m", 1])).toEqual([3]);
    expect(valuesAtPath(args, ["m", 0, 1])).toEqual([2]);
    expect(valuesAtPath(args, ["m"])).toEqual([1, 2, 3]);
  });

  it("has no value past a list's end, on a value that is not a list, or for an index first", () => {
    expect(valuesAtPath(args, ["argv", 3])).toEqual([]);
    expect(valuesAtPath(args, ["s", 0])).toEqual([]);
    expect(valuesAtPath(args, ["empty", 0])).toEqual([]);
    expect(valuesAtPath(args, ["o", 0])).toEqual([]);
    expect(valuesAtPath(args, [0])).toEqual([]);
    expect(valuesAtPath(args, ["argv", 0, 0])).toEqual([]);
  });

  it("tells an index from a member named by its digits", () => {
    expect(valuesAtPath(args, ["o", "0"])).toEqual(["member zero"]);
    expect(valuesAtPath({ l: ["a"] }, ["l", "0"])).toEqual([]);
  });

  it("applies a name after an index to the element, and an index after a name to each list the name reaches", () => {
    expect(valuesAtPath(args, ["items", 1, "id"])).toEqual(["b"]);
    expect(valuesAtPath(args, ["items", "id"])).toEqual(["a", "b", "c"]);
    // `items.tags` reaches one list per element; the index picks from each.
    expect(valuesAtPath(args, ["items", "tags", 0])).toEqual(["x", "z"]);
    expect(valuesAtPath(args, ["items", "tags", 1])).toEqual(["y"]);
    expect(valuesAtPath(args, ["items", "tags"])).toEqual(["x", "y", "z"]);
    expect(valuesAtPath(args, ["o", "list", 0, "deep", 1])).toEqual([20]);
    expect(valuesAtPath(args, ["o", "list", "deep"])).toEqual([10, 20]);
  });

  it("returns the values reached without a copy when none is a list", () => {
    expect(valuesAtPath({ a: { b: 1 } }, ["a", "b"])).toEqual([1]);
    expect(valuesAtPath({ a: [{ b: [[1], 2] }] }, ["a", "b"])).toEqual([1, 2]);
  });
});

describe("naming key paths", () => {
  it("displays an index as its digits and the name \"0\" quoted", () => {
    expect(keyPathDisplay(["argv", 0])).toBe("argv.0");
    expect(keyPathDisplay(["o", "0", "a.b", 12])).toBe('o."0"."a.b".12');
  });

  it("identifies an index apart from a name of the same digits", () => {
    expect(keyPathId(["argv", 0])).not.toBe(keyPathId(["argv", "0"]));
    expect(keyPathId(["argv"])).toBe("argv");
    expect(keyPathId(["a", "b"])).toBe(keyPathId(["a", "b"]));
    expect(keyPathNames(["items", 0, "id", 2])).toEqual(["items", "id"]);
  });
});

describe("key paths with indexes in the signature", () => {
  const events: TraceEvent[] = [
    { position: 1, action: "Bash", args: { argv: ["push", "--force", "origin"], items: [{ tags: ["a", "b"] }], s: "x", empty: [] } },
    { position: 2, action: "rm", args: { argv: ["-rf"], m: [[1, 2, 3, 4], [5]] } },
  ];
  const signature = signatureOf(events);

  it("records the longest list under each name, nested lists included", () => {
    expect(signature.keys.get("argv")?.listLength).toBe(3);
    expect(signature.keys.get("m")?.listLength).toBe(4);
    expect(signature.keys.get(keyPathId(["items", "tags"]))?.listLength).toBe(2);
    expect(signature.keys.get("empty")?.listLength).toBe(0);
    expect(signature.keys.get("s")?.listLength).toBeUndefined();
    expect(signatureToJson(signature).keys.find((k) => k.key === "argv")).toMatchObject({ longestList: 3, distinctValues: 4 });
  });

  it("admits an index below the longest list's length, read through the names", () => {
    const found = lookUpKey(signature, ["argv", 2]);
    expect(found.found && found.info.segments).toEqual(["argv"]);
    expect(lookUpKey(signature, ["items", 0, "tags", 1])).toMatchObject({ found: true });
    expect(lookUpKey(signature, ["m", 3])).toMatchObject({ found: true });
  });

  it("says why an index path is not in Σ", () => {
    expect(lookUpKey(signature, ["argv", 3])).toEqual({ found: false, reason: "index", list: ["argv"], index: 3, listLength: 3 });
    expect(lookUpKey(signature, ["s", 0])).toEqual({ found: false, reason: "index", list: ["s"], index: 0, listLength: undefined });
    expect(lookUpKey(signature, ["empty", 0])).toMatchObject({ found: false, reason: "index", listLength: 0 });
    expect(lookUpKey(signature, ["argvv", 0])).toEqual({ found: false, reason: "key" });
    expect(lookUpKey(signature, ["argv", 0, "x"])).toEqual({ found: false, reason: "key" });
  });

  it("reads an array of a tool schema as a list bounded by its maxItems", () => {
    const schemas = JSON.stringify({
      tools: [{ name: "send", inputSchema: { type: "object", properties: { to: { type: "array", items: { type: "string" } }, pair: { type: "array", items: { type: "number" }, maxItems: 2 }, n: { type: "number" } } } }],
    });
    const { signature: fromSchemas, diagnostics } = signatureFromToolSchemas(schemas);
    expect(diagnostics).toEqual([]);
    expect(lookUpKey(fromSchemas, ["to", 1000])).toMatchObject({ found: true });
    expect(lookUpKey(fromSchemas, ["pair", 1])).toMatchObject({ found: true });
    expect(lookUpKey(fromSchemas, ["pair", 2])).toMatchObject({ found: false, reason: "index", listLength: 2 });
    expect(lookUpKey(fromSchemas, ["n", 0])).toMatchObject({ found: false, reason: "index" });
    // An unbounded list is not printed with a length.
    expect(signatureToJson(fromSchemas).keys.find((k) => k.key === "to")).not.toHaveProperty("longestList");
  });
});
