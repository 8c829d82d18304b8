// etcd v3 plumbing for the etcd lease store: the client with fast-failing calls and a short watch
// back-off, flannel's key layout, etcd lease grant/keep-alive/revoke, and the config read.
import { readFileSync } from 'node:fs';
import { Etcd3, type IOptions } from 'etcd3';
import { type NetConf, parseNetConf } from '../config/net-conf.ts';
import { parseLeaseAttrs, parseLeaseKey } from './lease-json.ts';
import type { Lease } from './store.ts';

export { DEFAULT_ETCD_PREFIX } from './lease-json.ts';

/** Key names under a prefix: <prefix>/config and <prefix>/subnets/<10.244.3.0-24>. */
export function etcdKeys(prefix: string): { config: string; subnets: string } {
  const p = prefix.replace(/\/+$/, '');
  return { config: `${p}/config`, subnets: `${p}/subnets/` };
}

type Backoff = NonNullable<NonNullable<IOptions['faultHandling']>['watchBackoff']>;

/** Doubling back-off capped at maxMs (etcd3's default waits up to 30 s before re-watching). */
function cappedBackoff(ms: number, maxMs: number): Backoff {
  return { duration: ms, next: () => cappedBackoff(Math.min(ms * 2, maxMs), maxMs) };
}

/** TLS and password auth for etcd, as flanneld's --etcd-cafile/-certfile/-keyfile/-username/-password name them (paths, not contents). */
export interface EtcdSecurity {
  cafile?: string;
  certfile?: string;
  keyfile?: string;
  username?: string;
  password?: string;
}

/** The etcd3 options for `sec`: TLS credentials when a CA or a client cert is named, auth when a username is. */
export function etcdSecurityOptions(sec: EtcdSecurity): Pick<IOptions, 'credentials' | 'auth'> {
  const read = (flag: string, path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (e) {
      throw new Error(`${flag} ${JSON.stringify(path)}: ${(e as Error).message}`, { cause: e });
    }
  };
  const out: Pick<IOptions, 'credentials' | 'auth'> = {};
  if (sec.cafile !== undefined || sec.certfile !== undefined) {
    // grpc's createSsl takes a null root certificate as "the system's roots"; etcd3 types it as a Buffer.
    out.credentials = {
      rootCertificate: (sec.cafile !== undefined ? read('--etcd-cafile', sec.cafile) : null) as Buffer,
      ...(sec.certfile !== undefined ? { certChain: read('--etcd-certfile', sec.certfile) } : {}),
      ...(sec.keyfile !== undefined ? { privateKey: read('--etcd-keyfile', sec.keyfile) } : {}),
    };
  }
  if (sec.username !== undefined) out.auth = { username: sec.username, password: sec.password ?? '' };
  return out;
}

/** Creates a client for `--etcd-endpoints` (URLs such as http://10.0.0.1:2379); unary calls time out after callTimeoutMs. */
export function createEtcdClient(endpoints: string[], callTimeoutMs = 5000, security: EtcdSecurity = {}): Etcd3 {
  for (const e of endpoints) {
    if (!/^https?:\/\/[^/]+\/?$/.test(e)) throw new Error(`--etcd-endpoints: ${JSON.stringify(e)} is not a URL such as http://127.0.0.1:2379`);
  }
  return new Etcd3({
    hosts: endpoints,
    ...etcdSecurityOptions(security),
    dialTimeout: callTimeoutMs,
    // Streams (watch, keep-alive) have no deadline; everything else fails fast so that an etcd
    // outage surfaces as errors the store retries, not as calls hanging for minutes.
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + callTimeoutMs }),
    faultHandling: { watchBackoff: cappedBackoff(100, 2000) },
  });
}

/** Reads and validates <prefix>/config (flannel's net-conf in etcd); throws when it is absent. */
export async function readEtcdNetConf(client: Etcd3, prefix: string): Promise<NetConf> {
  const key = etcdKeys(prefix).config;
  const text = await client.get(key).string();
  if (text === null) throw new Error(`etcd: ${key} not found; store the net-conf JSON there or pass --net-conf`);
  return parseNetConf(text);
}

/** Turns a subnets/<key> entry into a Lease (expiration unknown: 0); null for keys or values that are not leases. */
export function kvToLease(key: string, value: Buffer | string, subnetsPrefix: string): Lease | null {
  if (!key.startsWith(subnetsPrefix)) return null;
  const k = parseLeaseKey(key.slice(subnetsPrefix.length));
  if (k === null) return null;
  try {
    const { raw: _raw, ...attrs } = parseLeaseAttrs(value);
    return { ...k, ...attrs, expiration: 0 };
  } catch {
    return null;
  }
}

/** Grants an etcd lease of ttlSeconds; returns its ID (a decimal string) and the TTL etcd chose. */
export async function grantEtcdLease(client: Etcd3, ttlSeconds: number): Promise<{ id: string; ttl: number }> {
  const res = await client.leaseClient.leaseGrant({ TTL: ttlSeconds });
  return { id: res.ID, ttl: Number(res.TTL) };
}

/** One keep-alive round trip; returns the refreshed TTL in seconds, 0 when etcd no longer knows the lease. */
export async function keepEtcdLeaseAlive(client: Etcd3, id: string, timeoutMs = 5000): Promise<number> {
  const stream = await client.leaseClient.leaseKeepAlive();
  try {
    const res = await new Promise<{ TTL: string }>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('etcd keep-alive timed out')), timeoutMs);
      stream.on('data', (r: { TTL: string }) => { clearTimeout(t); resolve(r); });
      stream.on('error', (e: Error) => { clearTimeout(t); reject(e); });
      stream.write({ ID: id });
    });
    return Math.max(0, Number(res.TTL));
  } finally {
    stream.end();
  }
}

/** Revokes an etcd lease (deleting keys bound to it); errors are swallowed: it expires anyway. */
export async function revokeEtcdLease(client: Etcd3, id: string): Promise<void> {
  try {
    await client.leaseClient.leaseRevoke({ ID: id });
  } catch {
    // Already gone, or etcd unreachable: the TTL cleans up.
  }
}
