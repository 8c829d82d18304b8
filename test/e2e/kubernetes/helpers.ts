// Shared by the kubelet-cluster suites: why they cannot run here (a loud skip on a developer's
// machine, a failure under CI=true), the DaemonSet's image as deploy/weft.yaml names it, and the
// image archive built once per test process by scripts/image.sh.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { containerdMissing } from '../../../testkit/containerd.ts';
import { KUBECTL } from '../../../testkit/kube-cluster/cluster.ts';
import { KUBE_BIN_DIR, missingKubeBinary } from '../../../testkit/kube-cluster/control-plane.ts';
import { SEA_WEFT } from '../../../testkit/kube-cluster/image.ts';
import { podSpec } from '../deploy/helpers.ts';

/** Why a kubelet cluster cannot run here, or undefined. */
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

/** The `skip` option of a suite: a loud message outside CI; false under CI=true (failUnlessReady() then fails it). */
export function skipOutsideCi(): string | false {
  const missing = kubeClusterMissing();
  if (missing === undefined || process.env['CI'] === 'true') return false;
  const msg = `########## SKIPPED kubelet cluster e2e: ${missing} ##########`;
  process.stderr.write(`${msg}\n`);
  return msg;
}

/** Throws when something is missing: CI never skips this suite. */
export function failUnlessReady(): void {
  const missing = kubeClusterMissing();
  if (missing !== undefined) throw new Error(`kubelet cluster e2e cannot run: ${missing}`);
}

/** The image the DaemonSet's containers name (one for all). */
export function daemonSetImage(): string {
  const s = podSpec();
  const images = new Set([...s.initContainers, ...s.containers].map((c) => c.image));
  if (images.size !== 1) throw new Error(`deploy/weft.yaml names ${images.size} images`);
  return [...images][0] as string;
}

/** The archive path of the DaemonSet image under `dir`. */
export function imageArchive(dir: string): string {
  return join(dir, 'weft-image.tar');
}
