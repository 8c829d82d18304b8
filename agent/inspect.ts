// The agent's public surface for the CLI: what `weft doctor` (cli/doctor/) needs of weftd to judge a
// node by weftd's own rules. cli/ imports agent/ through this module only (test/unit/layers.test.ts
// holds it to that), so a move inside agent/ changes this file's imports, never the CLI. Everything
// here is pure or read-only: importing it runs nothing, and no export writes to the node, takes a
// store's lock or starts a loop; the readers run in the calling process's netns. The flags weftd and
// doctor share (the lease source's) are defined here and weftd's agent/flags.ts takes them from here.
// An export added here widens the contract between weftd and the CLI: add only what the CLI reads.
import type { Command } from 'commander';
import { FLANNELD_DEFAULT_ETCD_ENDPOINTS } from './flanneld-argv.ts';
import type { EtcdSecurity } from './lease/etcd/client.ts';
import { DEFAULT_ETCD_PREFIX } from './lease/lease-json.ts';
import type { StoreFlags } from './lease/store-flags.ts';

// flanneld's command-line syntax and FLANNELD_* environment, as weftd takes them.
export { flanneldArgv, flanneldEnvName } from './flanneld-argv.ts';
// Which lease store a set of flags selects (and the etcd TLS/auth pairs checked), as weftd decides.
export { normalizeStoreFlags } from './lease/store-flags.ts';
export type { EtcdSecurity } from './lease/etcd/client.ts';
// flannel's net-conf.json as weftd parses and validates it.
export { parseNetConf, type NetConf } from './config/net-conf.ts';
export type { BackendConf } from './config/backend-conf.ts';
// The lease layout and its read-only readers: a lease, the file store's directory, etcd's keys
// through its JSON gateway.
export type { Lease } from './lease/store.ts';
export { LeaseDirReader } from './lease/file/lease-io.ts';
export { EtcdGateway } from './lease/etcd/gateway.ts';
export { readGatewayLeases, readGatewayNetConf } from './lease/etcd/gateway-leases.ts';
// --kube-subnet-mgr read-only: the connection weftd resolves (kubeconfig, --kube-api-url, in-cluster),
// its API client (doctor only GETs), and a Node's lease as weftd reads its podCIDR and annotations.
export { resolveKubeConn, type KubeConn } from './kube/config.ts';
export { KubeClient, KubeApiError } from './kube/client.ts';
export { annotationKeys, DEFAULT_ANNOTATION_PREFIX, nodePodCidr4, nodeToLease, subnetInNetwork, type KubeNode } from './lease/kube/node-lease.ts';
// The uplink weftd chooses for the same --iface/--public-ip.
export { chooseUplink, type Uplink, type UplinkQuery } from './uplink.ts';
// The reconcile's desired state and its diff against the kernel (pure), and the udp forwarder's peers.
export { desiredState } from './reconcile/desired.ts';
export { planReconcile, type DevIndexes, type Op } from './reconcile/diff.ts';
export { udpPeerLeases, type PeerRow } from './udp/peer-table.ts';
// Which foreign forward chains drop pod traffic and the accepts weftd puts there (pure, and a netlink read).
export { FORWARD_TAG, isForeignForwardChain, listForwardChainRules, wantedForwardRules, type ForwardChainRules, type ForwardNets } from './forward-rules.ts';
// NetworkPolicy (weftd --network-policy): its table's names and the view of this node it leaves beside subnet.env.
export { CHAIN_EG, CHAIN_IN, POLICY_TABLE, SET_ISO_EG, SET_ISO_EG6, SET_ISO_IN, SET_ISO_IN6 } from './policy/desired.ts';
export { MAP_EG, MAP_EG6, MAP_IN, MAP_IN6 } from './policy/groups.ts';
export { parsePolicyView, policyViewPath, type PolicyView } from './policy/state.ts';
// Services (weftd's kube-proxy replacement): the desired ruleset rendered from Services and EndpointSlices (pure)
// and the kernel's table read back, to compare.
export { DYNAMIC_MAPS, type KernelContent } from './services/content.ts';
export { slicesByService } from './services/endpoints.ts';
export { readSvcTable } from './services/kernel.ts';
export { FIXED_CHAINS } from './services/skeleton.ts';
export { sharedChainComments } from './services/skeleton.ts';
export { allUnits } from './services/model.ts';
export { renderAll } from './services/render.ts';
export type { EndpointSlice, ProxyNodeConfig, Service } from './services/types.ts';
// The names weftd exports on /metrics.
export { M as WEFTD_METRICS } from './agent-metrics.ts';
export { UDP_METRICS } from './udp/counters.ts';

/** weftd's defaults of the flags doctor shares with it (what weftd uses when its unit gives none). */
export const WEFTD_DEFAULTS = {
  subnetFile: '/run/flannel/subnet.env',
  etcdPrefix: DEFAULT_ETCD_PREFIX,
} as const;

/** The lease-source flags weftd and `weft doctor` share, as commander hands them over. */
export interface RawLeaseSourceFlags {
  store?: string;
  etcdEndpoints?: string;
  etcdPrefix?: string;
  etcdKeyfile?: string;
  etcdCertfile?: string;
  etcdCafile?: string;
  etcdUsername?: string;
  etcdPassword?: string;
}

/** flanneld's etcd TLS and auth flags: name and description, weftd's and doctor's alike. */
const ETCD_SECURITY_FLAGS: ReadonlyArray<readonly [flags: string, description: string]> = [
  ['--etcd-keyfile <path>', 'client key for etcd TLS (with --etcd-certfile)'],
  ['--etcd-certfile <path>', 'client certificate for etcd TLS (with --etcd-keyfile)'],
  ['--etcd-cafile <path>', "CA that signed etcd's server certificate (default: the system CAs)"],
  ['--etcd-username <name>', 'etcd user (etcd auth)'],
  ['--etcd-password <password>', 'password of --etcd-username'],
];

/** Adds flanneld's etcd TLS and auth flags to `cmd` (weftd's command and `weft doctor`'s). */
export function withEtcdSecurityOptions(cmd: Command): Command {
  for (const [flags, description] of ETCD_SECURITY_FLAGS) cmd.option(flags, description);
  return cmd;
}

/** The file/etcd part of StoreFlags from the raw flags, flanneld's way; normalizeStoreFlags validates it. */
export function leaseSourceFlags(f: RawLeaseSourceFlags): Pick<StoreFlags, 'store' | 'etcdEndpoints' | 'etcdPrefix' | 'etcdSecurity'> {
  const etcdOnly = [f.etcdPrefix, f.etcdKeyfile, f.etcdCertfile, f.etcdCafile, f.etcdUsername, f.etcdPassword].some((x) => x !== undefined);
  // flanneld always talks to etcd: its --etcd-* flags without endpoints mean its default endpoints.
  const etcdEndpoints = f.etcdEndpoints ?? (etcdOnly && f.store === undefined ? FLANNELD_DEFAULT_ETCD_ENDPOINTS : undefined);
  return {
    ...(f.store !== undefined ? { store: f.store } : {}),
    ...(etcdEndpoints !== undefined ? { etcdEndpoints } : {}),
    ...(f.etcdPrefix !== undefined ? { etcdPrefix: f.etcdPrefix } : {}),
    ...etcdSecurity(f),
  };
}

/** The etcd TLS/auth flags that were given, as StoreFlags.etcdSecurity (absent when none was; normalizeStoreFlags checks the pairs). */
function etcdSecurity(f: RawLeaseSourceFlags): { etcdSecurity?: EtcdSecurity } {
  const sec: EtcdSecurity = {
    ...(f.etcdCafile !== undefined ? { cafile: f.etcdCafile } : {}),
    ...(f.etcdCertfile !== undefined ? { certfile: f.etcdCertfile } : {}),
    ...(f.etcdKeyfile !== undefined ? { keyfile: f.etcdKeyfile } : {}),
    ...(f.etcdUsername !== undefined ? { username: f.etcdUsername } : {}),
    ...(f.etcdPassword !== undefined ? { password: f.etcdPassword } : {}),
  };
  return Object.keys(sec).length > 0 ? { etcdSecurity: sec } : {};
}
