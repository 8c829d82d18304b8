// Helpers for the deploy/weft.yaml tests: the manifest's objects (parsed as the API server would
// get them), Debian's kubectl unpacked by scripts/kubectl-setup.sh, the image built by
// scripts/image.sh into a private podman store, and the DaemonSet's containers run by podman.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { run, type ExecResult } from '../../../testkit/exec.ts';
import type { KubeApiServer } from '../../../testkit/kube-apiserver.ts';
import type { PodmanEnv } from '../../../testkit/podman.ts';
import { nsExec } from '../../../testkit/topology.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const MANIFEST = join(ROOT, 'deploy', 'weft.yaml');
export const SEA_WEFT = join(ROOT, 'dist', 'sea', 'weft');
/** Where scripts/kubectl-setup.sh unpacks Debian's kubernetes-client. */
export const KUBECTL = join(process.env.WEFT_CACHE_DIR ?? '/var/cache/weft', 'kubectl-debian', 'current', 'usr', 'bin', 'kubectl');
/**
 * podman's limits for every container: its default RLIMIT_NOFILE/NPROC are above the hard limits
 * of a process in this CI container (see testkit/podman.ts).
 */
export const ULIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

/** One object of the manifest. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}

/** A container of the DaemonSet's pod template. */
export interface PodContainer {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  securityContext?: { privileged?: boolean; capabilities?: { add?: string[] } };
}

/** The DaemonSet's pod spec, the parts the tests use. */
export interface PodSpec {
  hostNetwork?: boolean;
  serviceAccountName?: string;
  initContainers: PodContainer[];
  containers: PodContainer[];
  volumes: Array<{ name: string; hostPath?: { path: string }; configMap?: { name: string } }>;
}

/** Every document of deploy/weft.yaml, in order; throws on a YAML error. */
export function manifestObjects(): KubeObject[] {
  const docs = parseAllDocuments(readFileSync(MANIFEST, 'utf8'));
  const out: KubeObject[] = [];
  for (const d of docs) {
    if (d.errors.length > 0) throw new Error(`deploy/weft.yaml: ${d.errors.map((e) => e.message).join('; ')}`);
    const o = d.toJS() as KubeObject | null;
    if (o !== null) out.push(o);
  }
  return out;
}

/** The one object of `kind` in the manifest. */
export function manifestObject(kind: string): KubeObject {
  const found = manifestObjects().filter((o) => o.kind === kind);
  if (found.length !== 1) throw new Error(`deploy/weft.yaml holds ${found.length} ${kind} objects, expected 1`);
  return found[0] as KubeObject;
}

/** The DaemonSet's pod template spec. */
export function podSpec(): PodSpec {
  const ds = manifestObject('DaemonSet') as KubeObject & { spec: { template: { spec: PodSpec } } };
  return ds.spec.template.spec;
}

/** The ConfigMap's data (file name -> content), as its volume shows it in the containers. */
export function configMapData(): Record<string, string> {
  return (manifestObject('ConfigMap') as KubeObject & { data: Record<string, string> }).data;
}

/** The host path behind a pod volume. */
export function hostPathOf(spec: PodSpec, volume: string): string {
  const p = spec.volumes.find((v) => v.name === volume)?.hostPath?.path;
  if (p === undefined) throw new Error(`volume ${volume} is not a hostPath`);
  return p;
}

/** Why the kubectl test cannot run, or false. */
export function kubectlSkipReason(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  if (!existsSync(KUBECTL)) return `${KUBECTL} missing: run scripts/kubectl-setup.sh (scripts/deps.sh does)`;
  return false;
}

/** Runs Debian's kubectl against `kube` from inside the API server's namespace. */
export function kubectl(kube: KubeApiServer, args: string[]): Promise<ExecResult> {
  return nsExec(kube.netns, [KUBECTL, '--kubeconfig', kube.kubeconfig, ...args], { timeoutMs: 120_000 });
}

/**
 * Builds the image with scripts/image.sh into `env`'s private store as `tag` (PODMAN: a wrapper
 * giving env's store flags and containers.conf); returns the image ID the script printed.
 */
export async function buildImage(env: PodmanEnv, tag: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-image-test-'));
  try {
    const wrapper = join(dir, 'podman');
    const q = (s: string): string => `'${s.replace(/'/g, `'"'"'`)}'`;
    writeFileSync(wrapper, `#!/bin/sh\nCONTAINERS_CONF=${q(env.confFile)} exec podman ${env.globalArgs().map(q).join(' ')} "$@"\n`, { mode: 0o755 });
    const r = await run(['bash', join(ROOT, 'scripts', 'image.sh'), '--tag', tag], { env: { ...process.env, PODMAN: wrapper }, timeoutMs: 600_000 });
    if (r.code !== 0) throw new Error(`scripts/image.sh failed (${r.code}): ${r.stderr.trim()}`);
    return r.stdout.trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
