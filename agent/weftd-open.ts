// What weftd opens before its first pass, in the calling thread's netns, in an order that fails
// before anything is written where it can: flags and files checked, the uplink found, /healthz bound,
// then the lease store opened, the backend made and this node's lease taken.
import type { Server } from 'node:http';
import { Rtnl } from '../lib/netlink/index.ts';
import { createAgentMetrics } from './agent-metrics.ts';
import { createBackend, type Backend, type UplinkV6 } from './backend/index.ts';
import { earlyStillFits, startUdpEarly } from './backend/udp-early.ts';
import { findUplinkV6 } from './backend/uplink-v6.ts';
import { hasIPv6 } from './config/net-conf.ts';
import { openLeaseStore } from './lease/open-store.ts';
import { type Lease, type LeaseStore, leaseName } from './lease/store.ts';
import { type Metrics, serveMetrics } from './metrics.ts';
import { checkSubnetFileWritable } from './preflight.ts';
import { previousIpv6Subnet, previousSubnet } from './previous-subnet.ts';
import { refuseBesideKubeProxy } from './services/kube-proxy-present.ts';
import { findUplink, type Uplink } from './uplink.ts';
import type { WeftdOptions } from './weftd.ts';

/** Everything a Weftd is made of; the caller closes server, store and rtnl if it fails after this. */
export interface OpenedWeftd {
  metrics: Metrics;
  server: Server | undefined;
  rtnl: Rtnl;
  uplink: Uplink;
  uplink6: UplinkV6 | undefined;
  store: LeaseStore;
  backend: Backend;
  own: Lease;
}

/** Opens weftd's parts up to its lease held; `health` answers /healthz meanwhile. Closes what it opened when it fails. */
export async function openWeftd(o: WeftdOptions, health: () => { ok: boolean; detail: string }): Promise<OpenedWeftd> {
  // Before anything is written: two Service proxies on one node would both DNAT the ClusterIPs.
  if (o.serviceProxy !== undefined) refuseBesideKubeProxy();
  checkSubnetFileWritable(o.subnetFile);
  const rtnl = Rtnl.open();
  let uplink: Uplink;
  try {
    uplink = findUplink(rtnl, o.uplink);
  } catch (e) {
    rtnl.close();
    throw e;
  }
  o.log.info('uplink', { ...uplink });
  // Bound before the lease is taken: a port in use or an address the node lacks fails here.
  const metrics = createAgentMetrics();
  let server: Server | undefined;
  try {
    if (o.metricsAddr !== undefined) server = await serveMetrics(o.metricsAddr, metrics, health);
  } catch (e) {
    rtnl.close();
    throw new Error(`cannot serve /healthz and /metrics on ${o.metricsAddr ?? ''} (--metrics-addr, --healthz-ip/--healthz-port): ${(e as Error).message}`, { cause: e });
  }
  // udp: flannel0 died with the previous agent; forward again before the slow store start-up.
  const early = await startUdpEarly(o, rtnl, uplink);
  let store: LeaseStore;
  try {
    store = await openLeaseStore({ ...o.store, onError: (e) => o.log.warn('lease store', { error: e }) });
  } catch (e) {
    early?.backend.stop();
    server?.close();
    rtnl.close();
    throw e;
  }
  try {
    const uplink6 = hasIPv6(store.netConf) ? findUplinkV6(rtnl, uplink, o.publicIpv6) : undefined;
    if (uplink6 !== undefined) o.log.info('uplink IPv6', { ...uplink6 });
    // udp is IPv4-only: with EnableIPv6 createBackend refuses it, so the early forwarder is never reused then.
    const reuse = early !== undefined && uplink6 === undefined && !hasIPv6(store.netConf) && earlyStillFits(early, store.netConf);
    if (!reuse) early?.backend.stop();
    const backend: Backend = reuse ? early.backend : createBackend(store.netConf.backend, uplink, {
      subnetFile: o.subnetFile, log: o.log, network: store.netConf.network, ...(uplink6 !== undefined ? { ipv6: uplink6 } : {}),
      ...(store.netConf.ipv6Network !== undefined ? { ipv6Network: store.netConf.ipv6Network } : {}),
    });
    backend.adoptLocal?.(rtnl);
    const preferred = previousSubnet(o.subnetFile, store.netConf.network);
    const v6Data = backend.backendV6Data?.();
    const own = await store.acquire({
      publicIp: uplink.publicIp, backendType: backend.type, backendData: backend.backendData(),
      ...(preferred !== undefined ? { preferredSubnet: preferred } : {}), ...previousIpv6Subnet(o.subnetFile, store.netConf.ipv6Network),
      ...(uplink6 !== undefined && v6Data !== undefined ? { publicIpv6: uplink6.publicIp, backendV6Data: v6Data } : {}),
    });
    o.log.info('lease acquired', { subnet: leaseName(own), publicIp: own.publicIp, backend: backend.type, preferred });
    return { metrics, server, rtnl, uplink, uplink6, store, backend, own };
  } catch (e) {
    server?.close();
    await store.close();
    rtnl.close();
    throw e;
  }
}
