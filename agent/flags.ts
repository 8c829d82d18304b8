// weftd's command line -> WeftdOptions: flag names as flannel spells them where flannel has them.
import { Command } from 'commander';
import type { EtcdSecurity } from './lease/etcd-client.ts';
import { normalizeStoreFlags } from './lease/open-store.ts';
import { createAgentLog, normalizeLogLevel } from './log.ts';
import { parseListenAddr } from './metrics.ts';
import type { WeftdOptions } from './weftd.ts';

/** The flags as commander hands them over. */
export interface RawFlags {
  netConf?: string;
  store?: string;
  etcdEndpoints?: string;
  etcdPrefix?: string;
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
  etcdUsername?: string;
  etcdPassword?: string;
  iface?: string;
  publicIp?: string;
  subnetFile: string;
  ipMasq?: boolean;
  metricsAddr?: string;
  resyncInterval: string;
  logLevel?: string;
  leaseTtl?: string;
}

/** Builds the commander program (no parsing yet). */
export function weftdCommand(version: string): Command {
  return new Command('weftd')
    .description('weft node agent: flannel-compatible subnet leases and vxlan / host-gw data plane')
    .version(version)
    .option('--net-conf <path>', "flannel net-conf.json (required with the file store; with etcd, default <etcd-prefix>/config)")
    .option('--store <spec>', 'lease store: file:/DIR shared by the nodes of one machine (default file:/var/lib/weft/leases)')
    .option('--etcd-endpoints <urls>', 'etcd v3 endpoints, comma-separated (selects the etcd store)')
    .option('--etcd-prefix <prefix>', 'etcd key prefix (default /coreos.com/network)')
    .option('--etcd-cafile <path>', 'CA bundle that verifies the etcd servers (TLS)')
    .option('--etcd-certfile <path>', 'client certificate for etcd (TLS, with --etcd-keyfile)')
    .option('--etcd-keyfile <path>', 'client key for etcd (TLS, with --etcd-certfile)')
    .option('--etcd-username <name>', 'etcd user (password auth)')
    .option('--etcd-password <password>', 'etcd password (password auth)')
    .option('--iface <name|ip>', 'uplink interface (name or one of its addresses); default: the default route\'s')
    .option('--public-ip <ip>', 'address advertised to peers (default: the uplink\'s first IPv4 address)')
    .option('--subnet-file <path>', 'where to write subnet.env', '/run/flannel/subnet.env')
    .option('--ip-masq', 'masquerade traffic leaving the cluster Network (nftables)')
    .option('--metrics-addr <host:port>', 'serve /metrics and /healthz here')
    .option('--resync-interval <ms>', 'safety-net reconcile period in ms (events act sooner)', '1000')
    .option('--lease-ttl <seconds>', 'lease TTL (default 86400, flannel\'s 24 h)')
    .option('--log-level <level>', 'debug, info, warn or error', 'info')
    .addHelpText('after', NET_CONF_HELP);
}

/** The etcd TLS/auth flags that were given, as StoreFlags.etcdSecurity (absent when none was). */
function etcdSecurityFlags(f: RawFlags): { etcdSecurity?: EtcdSecurity } {
  const sec: EtcdSecurity = {
    ...(f.etcdCafile !== undefined ? { cafile: f.etcdCafile } : {}),
    ...(f.etcdCertfile !== undefined ? { certfile: f.etcdCertfile } : {}),
    ...(f.etcdKeyfile !== undefined ? { keyfile: f.etcdKeyfile } : {}),
    ...(f.etcdUsername !== undefined ? { username: f.etcdUsername } : {}),
    ...(f.etcdPassword !== undefined ? { password: f.etcdPassword } : {}),
  };
  return Object.keys(sec).length > 0 ? { etcdSecurity: sec } : {};
}

/** The net-conf.json keys, for --help (docs/weftd.md has the whole story). */
const NET_CONF_HELP = `
net-conf.json (flannel's keys, matched case-insensitively):
  Network                    cluster IPv4 network (required)
  SubnetLen, SubnetMin/Max   node subnet size and range (flannel's defaults)
  Backend.Type               vxlan | host-gw | udp (udp when Backend is absent, as flannel)
  Backend.VNI, Port, MTU     vxlan: VNI 1, port 8472; udp: port 8285; MTU: uplink minus overhead
  Backend.DirectRouting      vxlan: plain routes to peers on the uplink's subnet (false)
  Backend.ChecksumOffload    vxlan: auto | off | on (default auto). TX checksum offload on flannel.<VNI>:
                             auto turns it off only on kernels older than 5.7 (VXLAN checksum bug
                             under NAT, flannel#1279); off always applies that workaround; on never.`;

/** Validates the parsed flags; throws an Error naming the flag and value. */
export function normalizeWeftdFlags(f: RawFlags): WeftdOptions {
  const storeFlags = {
    ...(f.store !== undefined ? { store: f.store } : {}),
    ...(f.etcdEndpoints !== undefined ? { etcdEndpoints: f.etcdEndpoints } : {}),
    ...(f.etcdPrefix !== undefined ? { etcdPrefix: f.etcdPrefix } : {}),
    ...(f.netConf !== undefined ? { netConfPath: f.netConf } : {}),
    ...etcdSecurityFlags(f),
  };
  normalizeStoreFlags(storeFlags);
  const resyncMs = Number(f.resyncInterval);
  if (!Number.isInteger(resyncMs) || resyncMs < 100 || resyncMs > 3_600_000) {
    throw new Error(`--resync-interval ${JSON.stringify(f.resyncInterval)} must be an integer from 100 to 3600000 (ms)`);
  }
  let ttlSeconds: number | undefined;
  if (f.leaseTtl !== undefined) {
    ttlSeconds = Number(f.leaseTtl);
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 5) throw new Error(`--lease-ttl ${JSON.stringify(f.leaseTtl)} must be an integer of at least 5 (seconds)`);
  }
  if (f.metricsAddr !== undefined) parseListenAddr(f.metricsAddr);
  if (!f.subnetFile.startsWith('/')) throw new Error(`--subnet-file ${JSON.stringify(f.subnetFile)} must be an absolute path`);
  const log = createAgentLog(normalizeLogLevel(f.logLevel));
  return {
    store: { ...storeFlags, ...(ttlSeconds !== undefined ? { ttlSeconds } : {}) },
    ...(f.iface !== undefined ? { iface: f.iface } : {}),
    ...(f.publicIp !== undefined ? { publicIp: f.publicIp } : {}),
    subnetFile: f.subnetFile,
    ipMasq: f.ipMasq === true,
    ...(f.metricsAddr !== undefined ? { metricsAddr: f.metricsAddr } : {}),
    resyncMs,
    // Coalesces a burst of notifications (our own writes echo back too) into one pass.
    debounceMs: 20,
    log,
  };
}
