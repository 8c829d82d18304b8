// What a kubelet cluster of the test kit needs on this machine (checked from the root namespace,
// read only): root, containerd + crictl + the busybox image, the Kubernetes binaries, Debian's
// kubectl, the standalone weft executable and podman for the DaemonSet image.
import { existsSync } from 'node:fs';
import { containerdMissing } from '../containerd.ts';
import { KUBECTL } from './cluster.ts';
import { KUBE_BIN_DIR, missingKubeBinary } from './control-plane.ts';
import { SEA_WEFT } from './image.ts';

/** Why a kubelet cluster with weft's DaemonSet cannot run here, or undefined. */
export function kubeClusterMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (network, mount namespaces, cgroups)';
  const ctrd = containerdMissing();
  if (ctrd !== undefined) return ctrd;
  const bin = missingKubeBinary();
  if (bin !== undefined) return `${bin} is missing (scripts/kube-setup.sh builds the Kubernetes binaries into ${KUBE_BIN_DIR})`;
  if (!existsSync(KUBECTL)) return `${KUBECTL} is missing (scripts/kubectl-setup.sh)`;
  if (!existsSync(SEA_WEFT)) return `${SEA_WEFT} is missing (npm run build)`;
  if (!existsSync('/usr/bin/podman')) return '/usr/bin/podman is missing (scripts/image.sh builds the DaemonSet image with it)';
  return undefined;
}
