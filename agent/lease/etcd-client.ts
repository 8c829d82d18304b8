// etcd v3 plumbing for the etcd lease store: the client with fast-failing calls and a short watch
// back-off, flannel's key layout, etcd lease grant/keep-alive/revoke, and the config read.
import { readFileSync } from 'node:fs';
import { Etcd3, type IOptions } from 'etcd3';
import { type NetConf, parseNetConf } from '../config/net-conf.ts';
import { parseLeaseAttrs, parseSubnetKey } from './lease-json.ts';
import type { Lease } from './store.ts';

/** flannel's default key prefix. */
export const DEFAULT_ETCD_PREFIX = '/coreos.com/network';

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

/** PEM files for TLS to etcd; without caFile the system CAs verify the server. */
export interface EtcdTlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/** Connection options beyond the endpoints. */
export interface EtcdClientOptions {
  tls?: EtcdTlsFiles;
  auth?: { username: string; password: string };
  callTimeoutMs?: number;
}

/** Reads one PEM file of a --etcd-* flag; throws naming the flag. */
function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`${flag} ${JSON.stringify(path)}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, { cause: e });
  }
}

/** Creates a client for `--etcd-endpoints` (URLs such as http://10.0.0.1:2379); unary calls time out after callTimeoutMs. */
export function createEtcdClient(endpoints: string[], o: EtcdClientOptions = {}): Etcd3 {
  const callTimeoutMs = o.callTimeoutMs ?? 5000;
  for (const e of endpoints) {
    if (!/^https?:\/\/[^/]+\/?$/.test(e)) throw new Error(`--etcd-endpoints: ${JSON.stringify(e)} is not a URL such as http://127.0.0.1:2379`);
    if (o.tls && e.startsWith('http:')) throw new Error(`--etcd-endpoints: ${JSON.stringify(e)} is http:// but TLS flags are given; use https://`);
  }
  const tls = o.tls;
  const credentials = tls ? {
    // grpc verifies against the system CAs when rootCertificate is null.
    rootCertificate: (tls.caFile !== undefined ? readPem('--etcd-cafile', tls.caFile) : null) as Buffer,
    ...(tls.certFile !== undefined ? { certChain: readPem('--etcd-certfile', tls.certFile) } : {}),
    ...(tls.keyFile !== undefined ? { privateKey: readPem('--etcd-keyfile', tls.keyFile) } : {}),
  } : undefined;
  return new Etcd3({
    hosts: endpoints,
    ...(credentials ? { credentials } : {}),
    ...(o.auth ? { auth: { username: o.auth.username, password: o.auth.password, callOptions: () => ({ deadline: Date.now() + callTimeoutMs }) } } : {}),
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
  const subnet = parseSubnetKey(key.slice(subnetsPrefix.length));
  if (subnet === null) return null;
  try {
    const a = parseLeaseAttrs(value);
    return { subnet, publicIp: a.publicIp, backendType: a.backendType, backendData: a.backendData, expiration: 0 };
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
