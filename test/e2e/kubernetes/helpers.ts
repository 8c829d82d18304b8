// Shared by the kubelet-cluster suites: why they cannot run here (a loud skip on a developer's
// machine, a failure under CI=true), the DaemonSet's image as deploy/weft.yaml names it, and the
// image archive built once per test process by scripts/image.sh.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { formatCensus } from '../../../testkit/kube-cluster/census.ts';
import type { KubeCluster } from '../../../testkit/kube-cluster/cluster.ts';
import { kubeClusterMissing } from '../../../testkit/kube-cluster/requirements.ts';
import { podSpec } from '../deploy/helpers.ts';

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

/** A suite's `after`: tears the cluster down, asserts it left nothing on the machine, removes the image dir. */
export function teardownCluster(k: KubeCluster | undefined, imgDir: string | undefined, log: (m: string) => void): void {
  if (k) {
    k.destroySync();
    const c = k.census();
    log(`after teardown: ${formatCensus(c)}`);
    assert.deepEqual(c, { netns: [], cgroups: [], mounts: [], processes: [] }, 'the cluster left something on the machine');
  }
  if (imgDir) rmSync(imgDir, { recursive: true, force: true });
}
