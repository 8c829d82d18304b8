// kube-flannel's node setup as users run it, on a kubelet node of the kit: the reference plugins
// (Debian's containernetworking-plugins) and flannel's own CNI plugin in the node's /opt/cni/bin,
// kube-flannel's cni-conf.json as /etc/cni/net.d/10-flannel.conflist, and the real flanneld
// (`--ip-masq --kube-subnet-mgr`, kube-flannel.yml's arguments) running in the node's network and
// mount namespaces with the admin kubeconfig (kube-flannel's ServiceAccount is not modelled). No
// kube-flannel image: nothing can be pulled, and flanneld as a host process is flannel's other mode.
import { type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeCluster } from './cluster.ts';
import type { KubeNode } from './node.ts';

const CACHE = process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft';
/** flanneld and flannel's CNI plugin as scripts/flannel-setup.sh and scripts/flannel-cni-setup.sh build them. */
export const FLANNELD = join(CACHE, 'go-bin', 'flannel-v0.28.10', 'flannel');
export const FLANNEL_CNI = join(CACHE, 'go-bin', 'flannel-cni-v0.9.1', 'flannel');
/** Debian's reference plugins. */
export const REFERENCE_DIR = '/usr/lib/cni';
const REFERENCE_PLUGINS = ['bridge', 'host-local', 'portmap', 'loopback', 'bandwidth'];
const FIXTURES = join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'real-configs');
/** kube-flannel.yml's cni-conf.json and net-conf.json, verbatim. */
export const KUBE_FLANNEL_CONFLIST = join(FIXTURES, 'kube-flannel.conflist');
export const KUBE_FLANNEL_NET_CONF = join(FIXTURES, 'kube-flannel.net-conf.json');

/** Why flannel cannot run on the kit here, or undefined. */
export function flannelMissing(): string | undefined {
  if (!existsSync(FLANNELD)) return `${FLANNELD} is missing (scripts/flannel-setup.sh)`;
  if (!existsSync(FLANNEL_CNI)) return `${FLANNEL_CNI} is missing (scripts/flannel-cni-setup.sh)`;
  for (const p of REFERENCE_PLUGINS) if (!existsSync(join(REFERENCE_DIR, p))) return `${join(REFERENCE_DIR, p)} is missing (apt-get install containernetworking-plugins)`;
  return undefined;
}

/** The flanneld processes of a cluster, one per node. */
export class Flannel {
  private readonly procs = new Map<string, ChildProcess>();

  constructor(private readonly k: KubeCluster) {}

  /** Installs the plugins and the conflist on `n` (as the node's package and kube-flannel's init containers do). */
  installCni(n: KubeNode): void {
    for (const p of REFERENCE_PLUGINS) copyFileSync(join(REFERENCE_DIR, p), join(n.cniBinDir, p));
    copyFileSync(FLANNEL_CNI, join(n.cniBinDir, 'flannel'));
    writeFileSync(join(n.cniConfDir, '10-flannel.conflist'), readFileSync(KUBE_FLANNEL_CONFLIST));
  }

  /** Starts flanneld on `n` (log in the node dir's flanneld.log); resolves once it wrote the node's subnet.env. */
  async start(n: KubeNode): Promise<void> {
    const netConf = join(n.root, 'kube-flannel-net-conf.json');
    writeFileSync(netConf, readFileSync(KUBE_FLANNEL_NET_CONF));
    const p = n.spawnInNode('flanneld', ['env', `NODE_NAME=${n.name}`, FLANNELD, '--ip-masq', '--kube-subnet-mgr',
      '--kubeconfig-file', this.k.control.kubeconfig, '--net-config-path', netConf]);
    this.procs.set(n.name, p);
    const env = join(n.runDir, 'flannel', 'subnet.env');
    await this.k.waitFor(`flanneld on ${n.name}: subnet.env`, () => {
      if (p.exitCode !== null) throw new Error(`flanneld on ${n.name} exited ${p.exitCode}: ${n.readLog('flanneld').slice(-2000)}`);
      return existsSync(env);
    }, 60_000, 100);
  }

  /** Stops flanneld on `n` (SIGTERM, as deleting kube-flannel's pod does); its device, routes and rules stay. */
  async stop(n: KubeNode): Promise<void> {
    const p = this.procs.get(n.name);
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const closed = new Promise((res) => p.once('close', res));
    p.kill('SIGTERM');
    // flanneld drains for a while on SIGTERM; kube-flannel's pod would be killed after its grace period too.
    const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
    await closed;
    clearTimeout(t);
    this.procs.delete(n.name);
  }
}
