// The catalogue of test/fixtures/real-configs: for each file, the runtime that ships or drives it
// (which decides the casing of runtimeConfig.portMappings) and whether weft runs it today. Read by
// real-configs.test.ts; docs/compatibility.md carries the same table for people.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfList } from '../../../testkit/cni-runner.ts';

export const FIXTURES_DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'real-configs');

/** How a runtime spells a port mapping: containerd (go-cni) has no JSON tags, ocicni (CRI-O, podman) has camelCase ones. */
export type Casing = 'containerd' | 'ocicni';

export interface Fixture {
  file: string;
  runtime: string;
  casing: Casing;
  /** Why it cannot run yet; absent: it must work. */
  pending?: string;
  /** What a pending fixture runs into today: a plugin weft does not ship, or a key ADD refuses (the test checks which). */
  blocker?: { missingPlugins: string[] } | { refusedKey: string };
}

export const FIXTURES: readonly Fixture[] = [
  { file: 'kube-flannel.conflist', runtime: 'containerd (kubelet)', casing: 'containerd' },
  { file: 'k3s-10-flannel.conflist', runtime: 'k3s embedded containerd', casing: 'containerd' },
  { file: 'kubespray-10-flannel.conflist', runtime: 'containerd (kubelet)', casing: 'containerd' },
  { file: 'kubespray-cni-flannel.conflist', runtime: 'containerd (kubelet)', casing: 'containerd' },
  { file: 'flannel-readme-mynet.conf', runtime: 'libcni (.conf, no cniVersion)', casing: 'containerd' },
  { file: 'flannel-readme-delegate.conf', runtime: 'libcni (.conf, no cniVersion)', casing: 'containerd' },
  { file: 'containerd-10-containerd-net.conflist', runtime: 'containerd', casing: 'containerd' },
  { file: 'k8s-docs-containerd-net.conflist', runtime: 'containerd', casing: 'containerd' },
  { file: 'aks-kubenet.conflist', runtime: 'containerd (AKS kubenet node)', casing: 'containerd' },
  { file: 'crio-10-crio-bridge.conf', runtime: 'CRI-O', casing: 'ocicni' },
  { file: 'crio-11-crio-ipv4-bridge.conflist', runtime: 'CRI-O', casing: 'ocicni' },
  { file: 'crio-99-loopback.conflist', runtime: 'CRI-O', casing: 'ocicni' },
  { file: 'podman-87-podman-bridge.conflist', runtime: 'podman (CNI backend)', casing: 'ocicni' },
  { file: 'podman-libnetwork-bridge.conflist', runtime: 'podman (CNI backend)', casing: 'ocicni' },
  { file: 'podman-libnetwork-dualstack.conflist', runtime: 'podman (CNI backend)', casing: 'ocicni' },
  { file: 'minikube-1-k8s.conflist', runtime: 'containerd (minikube)', casing: 'containerd' },
  { file: 'cri-dockerd-kubenet.conf', runtime: 'cri-dockerd kubenet (libcni)', casing: 'containerd' },
];

/** The net-conf.json fixtures (weftd's --net-conf), with the backend they name. */
export const NET_CONFS: ReadonlyArray<{ file: string; backend: string }> = [
  { file: 'kube-flannel.net-conf.json', backend: 'vxlan' },
  { file: 'k3s-flannel.net-conf.json', backend: 'vxlan' },
  { file: 'k3s-flannel-host-gw.net-conf.json', backend: 'host-gw' },
  { file: 'kubespray.net-conf.json', backend: 'vxlan' },
];

/** The fixture as a conflist, as libcni loads it: a .conf becomes a one-plugin list (ConfListFromConf). */
export function loadConfList(file: string): ConfList {
  const doc = JSON.parse(readFileSync(join(FIXTURES_DIR, file), 'utf8')) as Record<string, unknown>;
  if (Array.isArray(doc['plugins'])) return doc as unknown as ConfList;
  return { cniVersion: typeof doc['cniVersion'] === 'string' ? doc['cniVersion'] : '', name: String(doc['name']), plugins: [doc as ConfList['plugins'][number]] };
}

/** One hostPort mapping (8080 -> 80/tcp) in the runtime's spelling. */
export function portMappings(casing: Casing): unknown[] {
  return casing === 'containerd'
    ? [{ HostPort: 8080, ContainerPort: 80, Protocol: 'tcp', HostIP: '' }]
    : [{ hostPort: 8080, containerPort: 80, protocol: 'tcp', hostIP: '' }];
}
