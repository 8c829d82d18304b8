// How many Service ports hold each programmed endpoint (address, port, protocol), for the proxy's
// endpoint count: kept per address (an IPv4 address as a number: addrKey) with the port, protocol
// and count packed in one small integer, instead of a key string per endpoint (100,000 of them at
// 10,000 Services), in an AddrTable (typed arrays for IPv4). Pure.
import { parseV4Number } from '../../lib/ip/index.ts';
import { AddrTable } from './addr-table.ts';

/** Counts up to this stay packed with their address; one more moves the endpoint to the string-keyed map. */
const MAX_PACKED = 8191;
const COUNT_BITS = 13;

/** port * 2 + (1 for UDP): fits with a count below 2^13 in a small integer (V8 keeps it unboxed). */
function portProto(port: number, proto: 'tcp' | 'udp'): number {
  return port * 2 + (proto === 'udp' ? 1 : 0);
}

/**
 * An address as a Map key: canonical dotted IPv4 text as its 32-bit value (a small integer: no string
 * kept per address, ~32 bytes each), any other text (IPv6, or IPv4 with leading zeros) as itself, so
 * two different texts never share a key.
 */
export function addrKey(ip: string): number | string {
  const v = parseV4Number(ip);
  return v === null ? ip : v | 0;
}

/** Reference counts of endpoints (see the module comment). */
export class EndpointRefs {
  /** address -> portProto << 13 | count, for the first (port, protocol) seen at that address. */
  private readonly packed = new AddrTable();
  /** `address|portProto` -> count, for every other (port, protocol) of an address and for counts past MAX_PACKED. */
  private readonly rest = new Map<string, number>();

  /** Distinct endpoints held. */
  get size(): number {
    return this.packed.size + this.rest.size;
  }

  /** Adds `d` (1 or -1) to an endpoint's count; at 0 it is forgotten. */
  move(ip: string, port: number, proto: 'tcp' | 'udp', d: 1 | -1): void {
    const pp = portProto(port, proto);
    const a = addrKey(ip);
    const v = this.packed.get(a);
    if (v !== undefined && v >> COUNT_BITS === pp) {
      const n = (v & MAX_PACKED) + d;
      if (n <= 0) this.packed.delete(a);
      else if (n <= MAX_PACKED) this.packed.set(a, v + d);
      else {
        this.packed.delete(a);
        this.rest.set(`${ip}|${pp}`, n);
      }
      return;
    }
    const k = `${ip}|${pp}`;
    const r = this.rest.get(k);
    if (r !== undefined) {
      if (r + d <= 0) this.rest.delete(k);
      else this.rest.set(k, r + d);
    } else if (d > 0) {
      if (v === undefined) this.packed.set(a, (pp << COUNT_BITS) | 1);
      else this.rest.set(k, 1);
    }
  }

  clear(): void {
    this.packed.clear();
    this.rest.clear();
  }
}
