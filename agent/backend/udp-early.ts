// The udp data plane before the lease store is up (weftd's netns). flannel0 is a non-persistent TUN:
// it dies with the agent that held it, so on a restart or a migration from flanneld pods are cut off
// until the new agent forwards again. Loading the etcd client (grpc, protobufjs) and taking the lease
// is most of that time, so weftd first reads what it needs the cheap way (net-conf from the file or
// etcd's JSON gateway, the lease table from the file store's directory or the gateway) and, when
// subnet.env names a lease this node still holds, brings flannel0, its route and the forwarder up on
// that real lease table. The store then acquires as usual and the first pass corrects anything that
// changed. Read-only until it opens the TUN; any doubt (no subnet.env, no such lease, another
// backend, etcd slow or refusing) means no early start, and weftd starts the usual way.
import { readFileSync } from 'node:fs';
import type { Rtnl } from '../../lib/netlink/index.ts';
import { networkForm, parseSubnetEnv } from '../../lib/flannel/subnet-env.ts';
import type { NetConf } from '../config/net-conf.ts';
import { UdpBackend } from './udp.ts';
import { LeaseDirReader } from '../lease/file/lease-io.ts';
import { readGatewayLeases, readGatewayNetConf } from '../lease/etcd/gateway-leases.ts';
import { readNetConfFile } from '../lease/open-store.ts';
import type { Lease } from '../lease/store.ts';
import { normalizeStoreFlags, type StoreFlags } from '../lease/store-flags.ts';
import type { AgentLog } from '../log.ts';
import type { Uplink } from '../uplink.ts';

/** How long the early etcd read may take before weftd gives up on it and starts the usual way. */
const GATEWAY_TIMEOUT_MS = 1000;

/**
 * After the early start, how long weftd lets the forwarder run before loading the etcd client, whose
 * synchronous evaluation (~110 ms CPU, several times that on a loaded machine) stops the event loop
 * and the forwarder with it: long enough for the packets queued in flannel0 and the peers' next
 * datagrams (a 10 Hz ping's next one) to get through, so the two pauses do not add up to one outage.
 */
const SETTLE_MS = 200;

/** What the early start needs of weftd's options. */
export interface EarlyUdpOptions {
  store: StoreFlags;
  subnetFile: string;
  log: AgentLog;
}

/** A udp backend already forwarding, and the net-conf it was built from. */
export interface EarlyUdp {
  backend: UdpBackend;
  netConf: NetConf;
}

/** The net-conf and live leases, read without the store; null for a store it cannot read (kube). */
async function readCheaply(store: StoreFlags): Promise<{ netConf: NetConf; leases: Lease[] } | null> {
  const sel = normalizeStoreFlags(store);
  if (sel.kind === 'kube') return null;
  if (sel.kind === 'file') {
    const netConf = readNetConfFile(store.netConfPath);
    if (netConf === null || netConf.backend.type !== 'udp') return null;
    const now = Date.now();
    return { netConf, leases: [...new LeaseDirReader(sel.dir).readAll().values()].filter((l) => l.expiration > now) };
  }
  // Imported here, not at the top: it loads node:http and node:https (TLS, OpenSSL), about 1 MB of
  // resident memory that a weftd on the file or kube store would otherwise carry for nothing.
  const { EtcdGateway } = await import('../lease/etcd/gateway.ts');
  const gw = new EtcdGateway(sel.endpoints, store.etcdSecurity ?? {}, GATEWAY_TIMEOUT_MS);
  const netConf = readNetConfFile(store.netConfPath) ?? await readGatewayNetConf(gw, sel.prefix);
  if (netConf === null || netConf.backend.type !== 'udp') return null;
  return { netConf, leases: await readGatewayLeases(gw, sel.prefix, { ttl: false }) };
}

/** The lease subnet.env remembers (network form), when it lies in `network`. */
function rememberedSubnet(path: string, network: string): string | null {
  try {
    const env = parseSubnetEnv(readFileSync(path, 'utf8'));
    return env.network === network ? networkForm(env.subnet) : null;
  } catch {
    return null;
  }
}

/** Starts the udp data plane on the remembered lease if it can (see the file comment); undefined otherwise. Never throws. */
export async function startUdpEarly(o: EarlyUdpOptions, rtnl: Rtnl, uplink: Uplink): Promise<EarlyUdp | undefined> {
  // WEFT_UDP_EARLY=0: start the usual way (for measuring what the early start gives).
  if (process.env['WEFT_UDP_EARLY'] === '0') return undefined;
  const t0 = performance.now();
  let backend: UdpBackend | undefined;
  try {
    const seen = await readCheaply(o.store);
    if (seen === null) return undefined;
    const subnet = rememberedSubnet(o.subnetFile, seen.netConf.network);
    const own = seen.leases.find((l) => l.subnet === subnet && l.publicIp === uplink.publicIp);
    if (own === undefined) {
      o.log.debug('udp: no early start', { reason: `no lease ${String(subnet)} for ${uplink.publicIp} (subnet.env ${o.subnetFile})` });
      return undefined;
    }
    backend = new UdpBackend(seen.netConf.backend, uplink, { network: seen.netConf.network, log: o.log });
    backend.ensureLocal(rtnl, own);
    backend.syncLeases(seen.leases, own);
    o.log.info('udp: forwarding before the lease store is up', { subnet: own.subnet, peers: seen.leases.length - 1, ms: Math.round(performance.now() - t0) });
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return { backend, netConf: seen.netConf };
  } catch (e) {
    backend?.stop();
    o.log.debug('udp: no early start', { reason: (e as Error).message });
    return undefined;
  }
}

/** True when the store's net-conf asks for the very backend the early start built (else it is replaced). */
export function earlyStillFits(early: EarlyUdp, netConf: NetConf): boolean {
  return netConf.network === early.netConf.network && JSON.stringify(netConf.backend) === JSON.stringify(early.netConf.backend);
}
