// The pods and node-side checks of CNI features kubelet asks for through the pod spec: a hostPort
// (portmap: DNAT of the node's address) and the bandwidth annotations (bandwidth plugin: tbf on the
// pod's host veth for ingress, on an ifb the veth redirects to for egress). Node-side reads run in
// the node's network namespace and change nothing.
import { ipJson } from '../netns.ts';
import { nsExec } from '../topology.ts';
import type { KubeNode } from './node.ts';

/** A single busybox httpd pod pinned to `node` by its hostname label, with extra spec and annotations. */
export function httpdPod(name: string, namespace: string, image: string, node: string, o: { hostPort?: number; annotations?: Record<string, string> } = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace, labels: { app: name }, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      automountServiceAccountToken: false, terminationGracePeriodSeconds: 1, nodeSelector: { 'kubernetes.io/hostname': node },
      containers: [{ name: 'httpd', image, imagePullPolicy: 'Never', command: ['/bin/httpd', '-f', '-p', '80', '-h', '/www'],
        ports: [{ containerPort: 80, ...(o.hostPort !== undefined ? { hostPort: o.hostPort } : {}) }] }],
    },
  };
}

/** The tc qdiscs shaping one pod on its node: on the host veth (ingress) and on its ifb (egress). */
export interface PodShaping {
  veth: string;
  vethQdiscs: string;
  ifb?: string;
  ifbQdiscs: string;
}

/** The qdiscs on the host veth whose ifindex is `hostIfindex` (the pod's eth0 iflink) and on the bwp* ifb its ingress redirects to. */
export async function podShaping(n: KubeNode, hostIfindex: number): Promise<PodShaping> {
  const links = await ipJson<Array<{ ifindex: number; ifname: string }>>(n.netns, ['link', 'show']);
  const veth = links.find((l) => l.ifindex === hostIfindex)?.ifname ?? '';
  const tc = async (args: string[]): Promise<string> => (await nsExec(n.netns, ['tc', ...args])).stdout;
  const filters = veth === '' ? '' : await tc(['filter', 'show', 'dev', veth, 'ingress']);
  const ifb = /redirect to device (bwp[0-9a-f]+)/i.exec(filters)?.[1];
  return { veth, vethQdiscs: veth === '' ? '' : await tc(['qdisc', 'show', 'dev', veth]), ...(ifb !== undefined ? { ifb } : {}),
    ifbQdiscs: ifb === undefined ? '' : await tc(['qdisc', 'show', 'dev', ifb]) };
}
