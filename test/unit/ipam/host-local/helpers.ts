// Test helpers for host-local unit tests: parse-or-fail shorthands.
import assert from 'node:assert/strict';
import type { Cidr, IpAddr } from '../../../../lib/ip/index.ts';
import { parseCidr, parseIp } from '../../../../lib/ip/index.ts';
import type { IpRange, RangeInput } from '../../../../ipam/host-local/range.ts';
import { normalizeRange } from '../../../../ipam/host-local/range.ts';

/** Parses an address or fails the test. */
export function ip(s: string): IpAddr {
  const a = parseIp(s);
  assert.ok(a, `bad test address ${s}`);
  return a;
}

/** Parses a CIDR or fails the test. */
export function cidr(s: string): Cidr {
  const c = parseCidr(s);
  assert.ok(c, `bad test cidr ${s}`);
  return c;
}

/** A normalised range from text fields. */
export function range(subnet: string, opts: { start?: string; end?: string; gw?: string } = {}): IpRange {
  const input: RangeInput = { subnet: cidr(subnet) };
  if (opts.start) input.rangeStart = ip(opts.start);
  if (opts.end) input.rangeEnd = ip(opts.end);
  if (opts.gw) input.gateway = ip(opts.gw);
  return normalizeRange(input);
}
