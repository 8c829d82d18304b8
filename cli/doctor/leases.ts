// Reading the lease source the way weftd does, read-only: net-conf.json (file or <prefix>/config in
// etcd) and every lease, with expiry where the store keeps one. Runs in the node's netns (etcd is
// read from there through its JSON gateway, with weftd's TLS and auth flags). Never writes, never
// takes the store's lock.
import { readFileSync } from 'node:fs';
import { EtcdGateway, LeaseDirReader, parseNetConf, readGatewayLeases, readGatewayNetConf, type Lease, type NetConf } from '../../agent/inspect.ts';
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
  const etcd = new EtcdGateway(endpoints, o.etcdSecurity);
  const base = o.etcdPrefix.replace(/\/+$/, '');
  let netConf: NetConf;
  if (o.netConf !== undefined) netConf = parseNetConf(readFileSync(o.netConf));
  else {
    const fromEtcd = await readGatewayNetConf(etcd, base);
    if (fromEtcd === null) throw new Error(`etcd: ${base}/config not found (weftd cannot start without it, or pass --net-conf as weftd has it)`);
    netConf = fromEtcd;
  }
  const leases = await readGatewayLeases(etcd, base, { ttl: true });
  return { source: `etcd:${endpoints.join(',')}`, netConf, leases };
}
