// The cluster both containerd + flannel suites run on: two simulated nodes with weftd (vxlan, file
// lease store), a containerd per node whose only network is a flannel conflist (per-node subnet file
// and data dirs substituted, since the nodes share one machine), and a client on the underlay.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { Cluster, type ClusterNode } from '../../../testkit/cluster.ts';
import { ContainerdEnv, uniqueNetworkName, type PodInfo } from '../../../testkit/containerd.ts';
import { standaloneBinDir } from '../../../testkit/standalone.ts';
import { failIfMissing, httpGet, leftovers, waitUntil, type NodeLeftovers } from './helpers.ts';

const CLIENT_IP = '192.0.2.200';
/** What the test image's httpd serves at /. */
export const BODY = 'hello from a weft container\n';

/** One node with its containerd and the paths its conflist names. */
export interface NodeEnv {
  node: ClusterNode;
  env: ContainerdEnv;
  net: string;
  ipamDir: string;
  flannelDir: string;
  pod?: PodInfo;
}

/** The cluster of one suite; `nodes` and `clientNs` are filled by its before hook. */
export interface FlannelCluster {
  readonly nodes: NodeEnv[];
  /** Path of the client namespace on the underlay (reaches the nodes' hostPorts). */
  clientNs: string;
  /** What a node still holds of pods: address files, veths, nft elements, cached results, stored delegates. */
  leftovers(n: NodeEnv): Promise<NodeLeftovers>;
  /** Waits until `url` answers with BODY from the namespace at `nsPath`. */
  waitServed(nsPath: string, url: string): Promise<void>;
  /** Starts pod `web` (httpd on 80, hostPort 8080, `annotations`) on every node, in parallel; sets each node's `pod`. */
  startWebPods(annotations?: Record<string, string>): Promise<void>;
}

/** `conflistFile` with this node's subnet.env and data dirs in its flannel plugin. */
function nodeConflist(conflistFile: string, name: string, n: ClusterNode, ipamDir: string, flannelDir: string): { name: string } & Record<string, unknown> {
  const conf = JSON.parse(readFileSync(conflistFile, 'utf8')) as { plugins: Array<Record<string, unknown>> };
  const plugins = conf.plugins.map((p) => (p['type'] === 'flannel' ? { ...p, subnetFile: n.subnetFile, dataDir: flannelDir, ipam: { dataDir: ipamDir } } : p));
  return { ...conf, name, plugins };
}

/**
 * Registers, in the calling describe(), the before hook that builds the cluster and the after hook that
 * removes it. `standalone`: containerd's bin_dir and weftd are a standalone bin dir (dist/sea/weft under every name).
 */
export function useFlannelCluster(conflistFile: string, opts: { standalone?: boolean } = {}): FlannelCluster {
  let cluster: Cluster | undefined;
  let bin: ReturnType<typeof standaloneBinDir> | undefined;
  const base = uniqueNetworkName();
  const c: FlannelCluster = {
    nodes: [],
    clientNs: '',
    leftovers: (n) => leftovers(n.env, n.node.netns, join(n.ipamDir, n.net), [n.flannelDir]),
    waitServed: (nsPath, url) => waitUntil(`${url} from ${nsPath}`, async () => (await httpGet(nsPath, url)) === BODY),
    startWebPods: async (annotations) => {
      await Promise.all(c.nodes.map(async (n) => {
        const spec = { name: 'web', ports: [{ hostPort: 8080, containerPort: 80 }], ...(annotations !== undefined ? { annotations } : {}) };
        const id = await n.env.runPod(spec);
        await n.env.startContainer(id, spec, 'httpd', ['/bin/httpd', '-f', '-p', '80', '-h', '/www']);
        n.pod = await n.env.inspectPod(id);
      }));
    },
  };
  before(async () => {
    failIfMissing();
    bin = opts.standalone === true ? standaloneBinDir() : undefined;
    cluster = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 0, conflist: 'flannel', ...(bin ? { binDir: bin.dir } : {}) });
    c.clientNs = `/var/run/netns/${(await cluster.topo.addUnderlayHost('cl', CLIENT_IP)).netns}`;
    for (const node of cluster.nodes) {
      // A network name per node: both nodes' containerd share the machine's libcni result cache.
      const net = `${base}-n${node.id}`;
      const ipamDir = join(node.dir, 'ipam-ctrd');
      const flannelDir = join(node.dir, 'flannel-ctrd');
      const env = await ContainerdEnv.start({ netns: node.netns, conflist: nodeConflist(conflistFile, net, node, ipamDir, flannelDir), ...(bin ? { binDir: bin.dir } : {}) });
      c.nodes.push({ node, env, net, ipamDir, flannelDir });
    }
  });
  after(async () => {
    for (const n of c.nodes) await n.env.destroy();
    cluster?.destroy();
    bin?.remove();
  });
  return c;
}
