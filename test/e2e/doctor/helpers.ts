// Runs the built `weft doctor` inside a simulated node's netns, with the node's paths as flags (the
// harness keeps each node's files in its own directory), and parses its --json report.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, ClusterNode } from '../../../testkit/cluster.ts';
import { nsExec } from '../../../testkit/topology.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
export const WEFT = join(ROOT, 'dist', 'bin', 'weft');

/** The report as doctor prints it with --json. */
export interface DoctorReport {
  ok: boolean;
  problems: Array<{ check: string; detail: string; fix: string }>;
  checks: Array<{ check: string; status: string; skipped?: string; facts: Record<string, unknown> }>;
}

/** Why these tests cannot run here, or false. */
export function skipReason(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  if (!existsSync(join(ROOT, 'dist', 'bin', 'weftd')) || !existsSync(WEFT)) return 'dist/bin missing: run npm run build';
  return false;
}

/** The node's CNI conf dir: the conflist the harness runs, as a runtime would find it. */
export function nodeConfDir(c: Cluster, n: ClusterNode): string {
  const dir = join(n.dir, 'net.d');
  if (!existsSync(dir)) {
    mkdirSync(dir);
    copyFileSync(join(ROOT, 'conf', `weft-${c.opts.backend}.conflist`), join(dir, '10-weft.conflist'));
  }
  return dir;
}

/** doctor's flags for node `n` of cluster `c` (file store, or etcd when the cluster has it). */
export function doctorArgs(c: Cluster, n: ClusterNode): string[] {
  const store = c.etcd ? ['--etcd-endpoints', c.etcd.url] : ['--store', `file:${c.leaseDir}`];
  const conf = c.etcd && c.opts.netConfInEtcd ? [] : ['--net-conf', c.netConfPath];
  return [...store, ...conf, '--iface', n.uplink, '--subnet-file', n.subnetFile, '--ipam-data-dir', join(n.dir, 'ipam'),
    '--cni-conf-dir', nodeConfDir(c, n), '--cni-bin-dir', join(ROOT, 'dist', 'bin'), '--metrics-addr', '127.0.0.1:9101'];
}

/** Runs `weft doctor --json` on node `n`; checks that the exit code agrees with `ok`. */
export async function doctor(c: Cluster, n: ClusterNode, extra: string[] = []): Promise<DoctorReport> {
  const r = await nsExec(n.netns, ['node', WEFT, 'doctor', '--json', ...doctorArgs(c, n), ...extra], { timeoutMs: 20_000 });
  assert.ok(r.code === 0 || r.code === 1, `doctor exit ${String(r.code)}: ${r.stderr}`);
  const report = JSON.parse(r.stdout) as DoctorReport;
  assert.equal(r.code === 0, report.ok, `exit code ${String(r.code)} must say ok=${String(report.ok)}`);
  return report;
}

/** The problems of one check. */
export function problemsOf(r: DoctorReport, check: string): DoctorReport['problems'] {
  return r.problems.filter((p) => p.check === check);
}

/** Fails with the whole report when it is not clean. */
export function assertClean(r: DoctorReport): void {
  assert.equal(r.ok, true, `expected a clean report, got: ${JSON.stringify(r.problems, null, 1)}`);
}
