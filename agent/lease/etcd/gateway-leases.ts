// The lease table and net-conf read through etcd's JSON gateway (gateway.ts), the
// way the etcd store would decode them, in the calling process's netns. Read-only: used where the
// gRPC store is not (yet) loaded, by `weft doctor` and by weftd's early udp data plane.
import { type NetConf, parseNetConf } from '../../config/net-conf.ts';
import type { EtcdGateway } from './gateway.ts';
import { parseLeaseAttrs, parseSubnetKey } from '../lease-json.ts';
import type { Lease } from '../store.ts';

/** <prefix>/config parsed, or null when the key is absent (throws when it does not parse). */
export async function readGatewayNetConf(etcd: EtcdGateway, prefix: string): Promise<NetConf | null> {
  const text = await etcd.get(`${prefix.replace(/\/+$/, '')}/config`);
  return text === null ? null : parseNetConf(text);
}

/**
 * Every lease under <prefix>/subnets/ (keys or values that do not decode are skipped, as the store
 * skips them). With `ttl`, each key's etcd lease TTL becomes the expiry (one more call per lease);
 * without, expiration is 0.
 */
export async function readGatewayLeases(etcd: EtcdGateway, prefix: string, o: { ttl: boolean }): Promise<Lease[]> {
  const base = `${prefix.replace(/\/+$/, '')}/subnets/`;
  const leases: Lease[] = [];
  for (const kv of await etcd.list(base)) {
    const subnet = parseSubnetKey(kv.key.slice(base.length));
    if (subnet === null) continue;
    let a: ReturnType<typeof parseLeaseAttrs>;
    try {
      a = parseLeaseAttrs(kv.value);
    } catch {
      continue;
    }
    const lease: Lease = { subnet, publicIp: a.publicIp, backendType: a.backendType, backendData: a.backendData, expiration: 0 };
    if (o.ttl && kv.lease !== '0') {
      // The key's etcd lease TTL is the lease's expiry (flannel grants 24 h and renews before the end).
      const left = await etcd.ttl(kv.lease).catch(() => -1);
      if (left >= 0) lease.expiration = Date.now() + left * 1000;
    }
    leases.push(lease);
  }
  return leases;
}
