// Reading the lease source the way weftd does, read-only: net-conf.json (file or <prefix>/config in
// etcd) and every lease, with expiry where the store keeps one. Runs in the node's netns (etcd is
// read from there through its JSON gateway). Never writes, never takes the store's lock.
import { readFileSync } from 'node:fs';
import { type NetConf, parseNetConf } from '../../agent/config/net-conf.ts';
import { LeaseDirReader } from '../../agent/lease/file-lease-io.ts';
import { parseLeaseAttrs, parseSubnetKey } from '../../agent/lease/lease-json.ts';
import type { Lease } from '../../agent/lease/store.ts';
import { EtcdGateway } from './etcd-gateway.ts';
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
  const etcd = new EtcdGateway(endpoints);
  const base = o.etcdPrefix.replace(/\/+$/, '');
  let netConf: NetConf;
  if (o.netConf !== undefined) netConf = parseNetConf(readFileSync(o.netConf));
  else {
    const text = await etcd.get(`${base}/config`);
    if (text === null) throw new Error(`etcd: ${base}/config not found (weftd cannot start without it, or pass --net-conf as weftd has it)`);
    netConf = parseNetConf(text);
  }
  const prefix = `${base}/subnets/`;
  const leases: Lease[] = [];
  for (const kv of await etcd.list(prefix)) {
    const subnet = parseSubnetKey(kv.key.slice(prefix.length));
    if (subnet === null) continue;
    let a: ReturnType<typeof parseLeaseAttrs>;
    try {
      a = parseLeaseAttrs(kv.value);
    } catch {
      continue;
    }
    const lease: Lease = { subnet, publicIp: a.publicIp, backendType: a.backendType, backendData: a.backendData, expiration: 0 };
    if (kv.lease !== '0') {
      // The key's etcd lease TTL is the lease's expiry (flannel grants 24 h and renews before the end).
      const ttl = await etcd.ttl(kv.lease).catch(() => -1);
      if (ttl >= 0) lease.expiration = Date.now() + ttl * 1000;
    }
    leases.push(lease);
  }
  return { source: `etcd:${endpoints.join(',')}`, netConf, leases };
}
