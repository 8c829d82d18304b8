// Reading the lease source the way weftd does, read-only: net-conf.json (file or <prefix>/config in
// etcd) and every lease, with expiry where the store keeps one. Runs in the node's netns (etcd is
// dialled from there). Never writes, never takes the store's lock.
import { readFileSync } from 'node:fs';
import { type NetConf, parseNetConf } from '../../agent/config/net-conf.ts';
import { LeaseDirReader } from '../../agent/lease/file-lease-io.ts';
import type { Lease } from '../../agent/lease/store.ts';
import type { DoctorOptions } from './options.ts';

/** What the lease source holds. */
export interface LeaseView {
  /** "file:/var/lib/weft/leases" or "etcd:http://...". */
  source: string;
  netConf: NetConf;
  leases: Lease[];
}

/** Reads net-conf and leases from the source the options select; throws with the reason when it cannot. */
export async function readLeaseView(o: DoctorOptions): Promise<LeaseView> {
  if (o.etcdEndpoints !== undefined) return readEtcd(o, o.etcdEndpoints);
  if (o.netConf === undefined) throw new Error('--net-conf is required with the file store');
  const netConf = parseNetConf(readFileSync(o.netConf));
  const dir = o.store.slice('file:'.length);
  const leases = [...new LeaseDirReader(dir).readAll().values()];
  return { source: o.store, netConf, leases };
}

async function readEtcd(o: DoctorOptions, endpoints: string[]): Promise<LeaseView> {
  // etcd3 (and grpc) load only when etcd is asked for: the file-store path stays light.
  const { createEtcdClient, etcdKeys, kvToLease, readEtcdNetConf } = await import('../../agent/lease/etcd-client.ts');
  const client = createEtcdClient(endpoints, 3000);
  try {
    const netConf = o.netConf !== undefined ? parseNetConf(readFileSync(o.netConf)) : await readEtcdNetConf(client, o.etcdPrefix);
    const prefix = etcdKeys(o.etcdPrefix).subnets;
    const res = await client.getAll().prefix(prefix).exec();
    const leases: Lease[] = [];
    for (const kv of res.kvs) {
      const l = kvToLease(kv.key.toString(), kv.value, prefix);
      if (l === null) continue;
      if (kv.lease !== '0') {
        // The etcd lease's remaining TTL is the lease's expiry (flannel grants 24 h, renews before the end).
        const r = await client.leaseClient.leaseTimeToLive({ ID: kv.lease }).catch(() => null);
        const ttl = r === null ? -1 : Number(r.TTL);
        if (ttl >= 0) l.expiration = Date.now() + ttl * 1000;
      }
      leases.push(l);
    }
    return { source: `etcd:${endpoints.join(',')}`, netConf, leases };
  } finally {
    client.close();
  }
}
