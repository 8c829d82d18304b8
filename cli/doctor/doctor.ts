// `weft doctor`: reads the node's state once (lease source, subnet.env, rtnetlink, host-local's
// files, weft's nftables table) and runs every check over it. Runs in the node's netns; changes
// nothing. Returns the report; the command prints it and exits 1 when it is not ok.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BackendConf } from '../../agent/inspect.ts';
import { vtepName } from '../../lib/flannel/devices.ts';
import { networkForm } from '../../lib/flannel/subnet-env.ts';
import { listTable, WEFT_TABLE, type NftTableState } from '../../lib/netfilter/index.ts';
import { liveAttachments, type LiveAttachments } from '../../lib/attach/bridge-veth.ts';
import { readAllocations, type Allocation } from './allocations.ts';
import { checkAllocations } from './check-allocations.ts';
import { checkBridge } from './check-bridge.ts';
import { checkCni } from './check-cni.ts';
import { checkForwardOnNode } from './check-forward.ts';
import { checkHealth, readWeftd } from './check-health.ts';
import { checkKernel } from './check-kernel.ts';
import { checkLease, ownLease } from './check-lease.ts';
import { checkMtu } from './check-mtu.ts';
import { checkNft } from './check-nft.ts';
import { checkPeers } from './check-peers.ts';
import { checkServicesOnNode } from './check-services.ts';
import { checkPolicyOnNode } from './check-policy.ts';
import { readLeaseView, type LeaseView } from './leases.ts';
import { readNodeState, uplinkOf, type NodeState } from './node-state.ts';
import type { DoctorOptions } from './options.ts';
import { buildReport, daemonSetFix, type CheckResult, type Report } from './problem.ts';
import { checkKube, kubeLeases, kubeNetConf, readKube, type KubeOptions } from './kube.ts';
import { nodeToLease, type NetConf } from '../../agent/inspect.ts';

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** Whether a conflist in `confDir` chains `type` (the bandwidth plugin needs ifb). */
function confUses(confDir: string, type: string): boolean {
  let names: string[];
  try {
    names = readdirSync(confDir).filter((n) => /\.(conflist|conf|json)$/.test(n));
  } catch {
    return false;
  }
  return names.some((n) => (readText(join(confDir, n)) ?? '').includes(`"${type}"`));
}

function skipped(check: string, why: string): CheckResult {
  return { check, problems: [], facts: {}, skipped: why };
}

/** Runs every check; never throws for what it finds, only for a failure to read the netns at all. */
export async function runDoctor(o: DoctorOptions): Promise<Report> {
  const node = readNodeState({ ...(o.iface !== undefined ? { iface: [o.iface] } : {}), ...(o.publicIp !== undefined ? { publicIp: o.publicIp } : {}) });
  const uplink = uplinkOf(node);
  let view: LeaseView | { error: string };
  let kube: CheckResult | undefined;
  // This node's public IP as the lease source knows it: the uplink's, or with Kubernetes its Node's lease.
  let publicIp = uplink?.publicIp ?? null;
  if (o.kube !== undefined) {
    const r = await readKubeLeases(o, o.kube, uplink?.publicIp ?? null);
    ({ view, kube } = r);
    publicIp = r.publicIp ?? publicIp;
  } else {
    try {
      view = await readLeaseView(o);
    } catch (e) {
      view = { error: (e as Error).message };
    }
  }
  const results: CheckResult[] = [];
  const cni = checkCni(o.cniConfDir, o.cniBinDir);
  const subnetEnvText = readText(o.subnetFile);
  if (subnetEnvText === null && usesNoOverlay(cni)) return forDeployment(o, await bridgeOnly(o, cni, node));
  const lease = checkLease({ view, publicIp, subnetFile: o.subnetFile, subnetEnvText, now: Date.now() });
  if (uplink === null && 'error' in node.uplink) lease.problems.push({ check: 'lease', detail: `no uplink: ${node.uplink.error}`, fix: 'pass --iface as weftd has it (systemctl cat weftd)' });
  results.push(lease);
  if (kube !== undefined) results.push(kube);
  const weftd = await readWeftd(o.metricsAddr, o.metricsFrom === 'default');
  results.push(checkHealth(weftd, noMetricsWhy(o)));
  results.push(cni);
  const own = 'error' in view ? null : ownLease(view, publicIp);
  if ('error' in view || own === null || uplink === null) {
    results.push(skipped('peers', 'needs the lease table, this node\'s lease and its uplink (see lease)'));
  } else {
    results.push(checkPeers({ netConf: view.netConf, leases: view.leases, own, uplink, node, metrics: weftd?.metrics ?? null }));
  }
  const subnet = own?.subnet ?? (lease.env !== null ? networkForm(lease.env.subnet) : null);
  const { allocs, live, tail } = localChecks(o, node, 'error' in view ? null : view.netConf.backend, subnet === null ? [] : [subnet]);
  results.push(checkBridge({ bridge: o.bridge, subnet, node, allocs, live }));
  if ('error' in view || uplink === null) results.push(skipped('mtu', 'needs the net-conf and the uplink (see lease)'));
  else results.push(checkMtu({ netConf: view.netConf, uplink, env: lease.env, bridge: o.bridge, node }));
  results.push(checkForwardOnNode('error' in view ? null : view.netConf, lease.env));
  results.push(await checkServicesOnNode('error' in view ? {} : { clusterCidrs: [view.netConf.network, view.netConf.ipv6Network ?? ''].filter((n) => n !== '') }));
  results.push(checkPolicyOnNode(o.subnetFile, allocs, [subnet, own?.ipv6Subnet]));
  results.push(...tail);
  return forDeployment(o, buildReport(results));
}

/** The leases from the Nodes (the kube check judges this node's), as the other checks read leases. */
async function readKubeLeases(o: DoctorOptions, k: KubeOptions, uplinkIp: string | null): Promise<{ view: LeaseView | { error: string }; kube: CheckResult; publicIp: string | null }> {
  const netConfFile = o.netConf !== undefined && existsSync(o.netConf) ? o.netConf : undefined;
  const kv = await readKube(k, netConfFile === undefined);
  const via = k.kubeconfigFile ?? k.kubeApiUrl ?? 'the in-cluster service account';
  let view: LeaseView | { error: string };
  let netConf: NetConf | null = null;
  if ('error' in kv) view = { error: `Kubernetes API: ${kv.error}` };
  else {
    try {
      netConf = kubeNetConf(netConfFile, kv);
      view = { source: `kube:${kv.server}`, netConf, leases: kubeLeases(kv, k.annotationPrefix) };
    } catch (e) {
      view = { error: (e as Error).message };
    }
  }
  const own = 'error' in kv || kv.node === null ? null : nodeToLease(kv.node, k.annotationPrefix);
  const kube = checkKube({ view: kv, opts: k, via, netConf, uplinkIp, daemonSet: o.daemonSet });
  return { view, kube, publicIp: own?.publicIp ?? null };
}

/** The report with every fix in the words of how weftd runs here (a DaemonSet's pod: kubectl, never systemctl). */
function forDeployment(o: DoctorOptions, r: Report): Report {
  if (!o.daemonSet) return r;
  const node = o.kube?.nodeName ?? '<this node>';
  return { ...r, problems: r.problems.map((p) => ({ ...p, fix: daemonSetFix(p.fix, node) })) };
}

/** The checks that need no lease: host-local leaks, orphan nft elements, kernel facts. */
function localChecks(o: DoctorOptions, node: NodeState, backend: BackendConf | null, subnets: readonly string[]): { allocs: Allocation[]; live: LiveAttachments; tail: CheckResult[] } {
  const allocs = readAllocations(o.ipamDataDir);
  const live = liveAttachments(node.links);
  const results: CheckResult[] = [];
  // The pods' subnets of this node: its lease's, and the bridge's (a bridge-only network has no lease).
  const bridge = node.links.find((l) => l.name === o.bridge);
  const onBridge = bridge === undefined ? [] : node.addrs.filter((a) => a.index === bridge.index && a.family === 4).map((a) => a.cidr);
  results.push(checkAllocations(o.ipamDataDir, allocs, live, [...subnets, ...onBridge]));
  let table: NftTableState | null = null;
  let nftOk = true;
  try {
    table = listTable(WEFT_TABLE);
  } catch (e) {
    nftOk = false;
    results.push(skipped('nft', `cannot list ${WEFT_TABLE.family} ${WEFT_TABLE.name}: ${(e as Error).message.split('\n')[0] ?? ''}`));
  }
  if (nftOk) results.push(checkNft(table, `${WEFT_TABLE.family} ${WEFT_TABLE.name}`, allocs, live));
  const kinds = new Set(node.links.map((l) => l.kind));
  const vtep = backend?.type === 'vxlan' && node.links.some((l) => l.name === vtepName(backend.vni)) ? { vtep: vtepName(backend.vni) } : {};
  results.push(checkKernel(backend?.type ?? null, {
    ...vtep,
    kubelet: existsSync('/var/lib/kubelet'),
    bandwidth: confUses(o.cniConfDir, 'bandwidth'),
    witnesses: { bridge: kinds.has('bridge'), veth: kinds.has('veth'), vxlan: kinds.has('vxlan'), tun: kinds.has('tun'), ifb: kinds.has('ifb'), nf_tables: nftOk && table !== null, br_netfilter: existsSync('/proc/sys/net/bridge') },
  }));
  return { allocs, live, tail: results };
}

/** Why the weftd check has no address to read. */
function noMetricsWhy(o: DoctorOptions): string {
  return o.metricsFrom === 'unit-has-none'
    ? 'the weftd unit runs weftd without --metrics-addr, so it serves no /healthz (weft install adds --metrics-addr=127.0.0.1:9101; or pass --metrics-addr)'
    : 'no --metrics-addr (weftd serves /healthz only with it)';
}

const OVERLAY_TYPES = ['flannel', 'flannel-vxlan', 'host-gw', 'flannel-udp'];

/** The CNI config was read and names no flannel plugin: a plain bridge network, no weftd. */
function usesNoOverlay(cni: CheckResult): boolean {
  const plugins = cni.facts['plugins'];
  return typeof plugins === 'string' && !plugins.split(',').some((t) => OVERLAY_TYPES.includes(t));
}

/** A node whose CNI config is a plain bridge network: weftd's checks do not apply. */
async function bridgeOnly(o: DoctorOptions, cni: CheckResult, node: NodeState): Promise<Report> {
  const why = `${String(cni.facts['config'])} uses no flannel plugin and there is no ${o.subnetFile}: a bridge network without weftd`;
  // No weftd is expected here: its health is checked only at an address given for it.
  const health = o.metricsFrom === 'given' ? checkHealth(await readWeftd(o.metricsAddr)) : skipped('weftd', why);
  const results = [skipped('lease', why), health, cni, skipped('peers', why), skipped('bridge', why), skipped('mtu', why)];
  results.push(...localChecks(o, node, null, []).tail);
  return buildReport(results);
}
