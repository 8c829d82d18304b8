// The etcd lease store's pieces that need no connection, and the choice of client: flannel's key
// layout, the TLS/auth flags, a key-value turned into a Lease, the net-conf read, and which etcd
// client a set of flags gets (the JSON gateway unless a client certificate meets password auth).
import { readFileSync } from 'node:fs';
import { type NetConf, parseNetConf } from '../../config/net-conf.ts';
import type { EtcdApi } from './api.ts';
import { parseLeaseAttrs, parseLeaseKey } from '../lease-json.ts';
import type { Lease } from '../store.ts';

export { DEFAULT_ETCD_PREFIX } from '../lease-json.ts';

/** Key names under a prefix: <prefix>/config and <prefix>/subnets/<10.244.3.0-24>. */
export function etcdKeys(prefix: string): { config: string; subnets: string } {
  const p = prefix.replace(/\/+$/, '');
  return { config: `${p}/config`, subnets: `${p}/subnets/` };
}

/** TLS and password auth for etcd, as flanneld's --etcd-cafile/-certfile/-keyfile/-username/-password name them (paths, not contents). */
export interface EtcdSecurity {
  cafile?: string;
  certfile?: string;
  keyfile?: string;
  username?: string;
  password?: string;
}

/** The TLS files `sec` names, read once (both clients take them as bytes); a file that cannot be read is named by its flag. */
export function readEtcdTlsFiles(sec: EtcdSecurity): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const read = (flag: string, path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (e) {
      throw new Error(`${flag} ${JSON.stringify(path)}: ${(e as Error).message}`, { cause: e });
    }
  };
  return {
    ...(sec.cafile !== undefined ? { ca: read('--etcd-cafile', sec.cafile) } : {}),
    ...(sec.certfile !== undefined ? { cert: read('--etcd-certfile', sec.certfile) } : {}),
    ...(sec.keyfile !== undefined ? { key: read('--etcd-keyfile', sec.keyfile) } : {}),
  };
}

/**
 * 'grpc' when the flags name a client certificate and a user: with auth on, etcd refuses any
 * gateway request carrying a client certificate ("CommonName of client sending a request against
 * gateway will be ignored", etcd's embed/serve.go, 3.4 to 3.6), so only gRPC can present both.
 */
export function etcdTransportFor(sec: EtcdSecurity): 'gateway' | 'grpc' {
  return sec.certfile !== undefined && sec.username !== undefined ? 'grpc' : 'gateway';
}

/** Reads and validates <prefix>/config (flannel's net-conf in etcd); throws when it is absent. */
export async function readEtcdNetConf(client: EtcdApi, prefix: string): Promise<NetConf> {
  const key = etcdKeys(prefix).config;
  const { kv } = await client.get(key);
  if (kv === undefined) throw new Error(`etcd: ${key} not found; store the net-conf JSON there or pass --net-conf`);
  return parseNetConf(kv.value);
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
