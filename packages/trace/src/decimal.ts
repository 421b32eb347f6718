/**
 * Exact decimal numbers, for the sums of `limit[X of KEY]`: the amounts an agent moves are decimals
 * (`100.10` and `399.90` make exactly `500.00`), and binary floating point would put a sum a hair
 * over its limit. A decimal is `units × 10^exponent`, both exact.
 */
export interface Decimal {
  readonly units: bigint;
  readonly exponent: number;
}

export const ZERO: Decimal = { units: 0n, exponent: 0 };

const decimalText = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/**
 * The decimal a JSON number's text (or a JavaScript number, by its shortest round-trip text) stands
 * for; undefined for anything else.
 */
export function decimalOf(value: string | number): Decimal | undefined {
  if (typeof value === "number" && !Number.isFinite(value)) return undefined;
  const match = decimalText.exec(String(value));
  if (match === null) return undefined;
  const [, sign, whole, fraction = "", power = "0"] = match;
  const exponent = Number(power) - fraction.length;
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 400) return undefined;
  const units = BigInt(`${sign}${whole}${fraction}`);
  return { units, exponent };
}

const jsonNumberText = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/**
 * The number a value stands for where numbers are compared (`amount > 100`): a number, or a string
 * that spells a JSON number exactly (`"150.00"`; not `" 150"`, `"0150"` or `"1e"`); undefined for
 * anything else (other strings, booleans, null, objects, lists, and numbers beyond the decimals'
 * range).
 */
export function numberOf(value: unknown): Decimal | undefined {
  if (typeof value === "number") return decimalOf(value);
  if (typeof value === "string" && value.length <= 400 && jsonNumberText.test(value)) return decimalOf(value);
  return undefined;
}

function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  if (a.exponent === b.exponent) return [a.units, b.units, a.exponent];
  if (a.exponent < b.exponent) return [a.units, b.units * 10n ** BigInt(b.exponent - a.exponent), a.exponent];
  return [a.units * 10n ** BigInt(a.exponent - b.exponent), b.units, b.exponent];
}

export function addDecimal(a: Decimal, b: Decimal): Decimal {
  const [x, y, exponent] = aligned(a, b);
  return { units: x + y, exponent };
}

export function subtractDecimal(a: Decimal, b: Decimal): Decimal {
  const [x, y, exponent] = aligned(a, b);
  return { units: x - y, exponent };
}

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export function compareDecimal(a: Decimal, b: Decimal): number {
  const [x, y] = aligned(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}


/** The decimal as plain text, without trailing zeros (`500.00` → `500`, `0.10` → `0.1`). */
export function formatDecimal(value: Decimal): string {
  let { units, exponent } = value;
  while (exponent < 0 && units % 10n === 0n) {
    units /= 10n;
    exponent++;
  }
  if (exponent >= 0) return (units * 10n ** BigInt(exponent)).toString();
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(-exponent + 1, "0");
  const point = digits.length + exponent;
  return `${negative ? "-" : ""}${digits.slice(0, point)}.${digits.slice(point)}`;
}
