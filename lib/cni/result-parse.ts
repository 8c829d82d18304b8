// Parsing of a result in any supported version's wire form into the internal (1.1.0) form.
// Used for prevResult and for delegate output; a malformed document is a decode failure (code 6)
// naming the offending field. Keys are matched as the reference's Go structs match them (decode.ts).
import { normalizeKeys } from './decode.ts';
import type { FieldTree } from './decode.ts';
import { decodeFailure, incompatibleVersion } from './errors.ts';
import { parseCidr, parseIp as parseIpText } from '../ip/index.ts';
import { SUPPORTED_VERSIONS } from './types.ts';
import type { Dns, Interface, IpConfig, Result, Route } from './types.ts';

type Obj = Record<string, unknown>;

const leaf: FieldTree = {};
const routeFields: FieldTree = { p: { dst: leaf, gw: leaf, mtu: leaf, advmss: leaf, priority: leaf, table: leaf, scope: leaf } };
const dnsFields: FieldTree = { p: { nameservers: leaf, domain: leaf, search: leaf, options: leaf } };
const legacyIpFields: FieldTree = { p: { ip: leaf, gateway: leaf, routes: { i: routeFields } } };

/** Every key of every result version (types/100 and types/020 in the reference). */
const RESULT_FIELDS: FieldTree = {
  p: {
    cniVersion: leaf,
    interfaces: { i: { p: { name: leaf, mac: leaf, mtu: leaf, sandbox: leaf, socketPath: leaf, pciID: leaf } } },
    ips: { i: { p: { version: leaf, address: leaf, gateway: leaf, interface: leaf } } },
    routes: { i: routeFields },
    dns: dnsFields,
    ip4: legacyIpFields,
    ip6: legacyIpFields,
  },
};

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(path: string, what: string, value: unknown): never {
  const shown = JSON.stringify(value)?.slice(0, 64) ?? String(value);
  throw decodeFailure('invalid result', `${path}: ${what}, got ${shown}`);
}

function str(o: Obj, key: string, path: string, required: true): string;
function str(o: Obj, key: string, path: string, required?: false): string | undefined;
function str(o: Obj, key: string, path: string, required = false): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return required ? bad(`${path}.${key}`, 'must be a string', v) : undefined;
  return typeof v === 'string' ? v : bad(`${path}.${key}`, 'must be a string', v);
}

function int(o: Obj, key: string, path: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  return Number.isInteger(v) ? (v as number) : bad(`${path}.${key}`, 'must be an integer', v);
}

function list(o: Obj, key: string, path: string): unknown[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  return Array.isArray(v) ? v : bad(`${path}.${key}`, 'must be an array', v);
}

function objects(o: Obj, key: string, path: string): Obj[] | undefined {
  return list(o, key, path)?.map((e, i) => (isObj(e) ? e : bad(`${path}.${key}[${i}]`, 'must be an object', e)));
}

function strings(o: Obj, key: string, path: string): string[] | undefined {
  return list(o, key, path)?.map((e, i) => (typeof e === 'string' ? e : bad(`${path}.${key}[${i}]`, 'must be a string', e)));
}

function set<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

function parseDns(o: Obj, path: string): Dns | undefined {
  const v = o['dns'];
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) return bad(`${path}.dns`, 'must be an object', v);
  const dns: Dns = {};
  const p = `${path}.dns`;
  set(dns, 'nameservers', strings(v, 'nameservers', p));
  set(dns, 'domain', str(v, 'domain', p));
  set(dns, 'search', strings(v, 'search', p));
  set(dns, 'options', strings(v, 'options', p));
  return dns;
}

// Addresses are decoded as Go's net.IPNet / net.IP do in the reference's result types: text that is
// not one is refused, so no plugin acts on it.
function cidrText(v: string, field: string): string {
  if (parseCidr(v) === null) bad(field, 'must be an address in CIDR form', v);
  return v;
}
function ipText(v: string | undefined, field: string): string | undefined {
  if (v !== undefined && parseIpText(v) === null) bad(field, 'must be an IP address', v);
  return v;
}

function parseRoute(r: Obj, path: string, v11: boolean): Route {
  const route: Route = { dst: cidrText(str(r, 'dst', path, true), `${path}.dst`) };
  set(route, 'gw', ipText(str(r, 'gw', path), `${path}.gw`));
  if (v11) {
    for (const k of ['mtu', 'advmss', 'priority', 'table', 'scope'] as const) set(route, k, int(r, k, path));
  }
  return route;
}

function parseInterface(i: Obj, path: string, v11: boolean): Interface {
  const iface: Interface = { name: str(i, 'name', path, true), mac: str(i, 'mac', path) ?? '' };
  if (v11) set(iface, 'mtu', int(i, 'mtu', path));
  set(iface, 'sandbox', str(i, 'sandbox', path));
  if (v11) {
    set(iface, 'socketPath', str(i, 'socketPath', path));
    set(iface, 'pciID', str(i, 'pciID', path));
  }
  return iface;
}

function parseIp(ip: Obj, path: string, nIfaces: number): IpConfig {
  const out: IpConfig = { address: cidrText(str(ip, 'address', path, true), `${path}.address`) };
  set(out, 'gateway', ipText(str(ip, 'gateway', path), `${path}.gateway`));
  const idx = int(ip, 'interface', path);
  if (idx !== undefined && (idx < 0 || idx >= nIfaces)) bad(`${path}.interface`, 'must index interfaces', idx);
  set(out, 'interface', idx);
  const fam = ip['version'];
  if (fam !== undefined && fam !== '4' && fam !== '6') bad(`${path}.version`, 'must be "4" or "6"', fam);
  return out;
}

function parseCurrent(doc: Obj, path: string, version: string): Result {
  const v11 = version === '1.1.0';
  const res: Result = {};
  const ifaces = objects(doc, 'interfaces', path)?.map((e, i) => parseInterface(e, `${path}.interfaces[${i}]`, v11));
  set(res, 'interfaces', ifaces);
  const n = ifaces?.length ?? 0;
  set(res, 'ips', objects(doc, 'ips', path)?.map((e, i) => parseIp(e, `${path}.ips[${i}]`, n)));
  set(res, 'routes', objects(doc, 'routes', path)?.map((e, i) => parseRoute(e, `${path}.routes[${i}]`, v11)));
  set(res, 'dns', parseDns(doc, path));
  return res;
}

// 0.1.0/0.2.0: {ip4: {ip, gateway, routes}, ip6: {...}, dns}; no interfaces.
function parseLegacy(doc: Obj, path: string): Result {
  const res: Result = {};
  const ips: IpConfig[] = [];
  const routes: Route[] = [];
  for (const fam of ['ip4', 'ip6'] as const) {
    const block = doc[fam];
    if (block === undefined || block === null) continue;
    const p = `${path}.${fam}`;
    if (!isObj(block)) bad(p, 'must be an object', block);
    const ip: IpConfig = { address: str(block, 'ip', p, true) };
    set(ip, 'gateway', str(block, 'gateway', p));
    ips.push(ip);
    objects(block, 'routes', p)?.forEach((r, i) => routes.push(parseRoute(r, `${p}.routes[${i}]`, false)));
  }
  if (ips.length) res.ips = ips;
  if (routes.length) res.routes = routes;
  set(res, 'dns', parseDns(doc, path));
  return res;
}

/**
 * Parse a result of any supported version into the internal form. The document's own cniVersion
 * wins; `fallbackVersion` (the config's) is used when it has none. `path` names it in errors.
 */
export function parseResult(raw: unknown, fallbackVersion?: string, path = 'result'): Result {
  const doc = normalizeKeys(raw, RESULT_FIELDS);
  if (!isObj(doc)) return bad(path, 'must be an object', doc);
  if (doc['cniVersion'] !== undefined && typeof doc['cniVersion'] !== 'string') return bad(`${path}.cniVersion`, 'must be a string', doc['cniVersion']);
  const version = typeof doc['cniVersion'] === 'string' ? doc['cniVersion'] : fallbackVersion;
  if (version === undefined) return bad(`${path}.cniVersion`, 'must be a string', doc['cniVersion']);
  if (!(SUPPORTED_VERSIONS as readonly string[]).includes(version)) {
    throw incompatibleVersion('unsupported result version', `${path}.cniVersion is "${version}"`);
  }
  return version === '0.1.0' || version === '0.2.0' ? parseLegacy(doc, path) : parseCurrent(doc, path, version);
}
