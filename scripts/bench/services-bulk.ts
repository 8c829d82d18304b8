// Single-stream bulk TCP throughput of the Service benchmark (iperf3, one stream, from the node
// namespace to the server namespace): through weft's ClusterIP, straight to the pod, and through one
// plain nft DNAT rule with and without masquerade (the floor), in interleaved rounds so the machine's
// load moves them alike. A bulk stream pays for DNAT once, at its first packet: what it shows is the
// per-packet cost of the established path, beside the new-connection rate of svc-probe.cjs.
import { spawn } from 'node:child_process';
import { inNetns } from '../../testkit/netns.ts';
import { nsExec } from '../../testkit/topology.ts';
import { quantile, round, type BenchResult } from './util.ts';

/** The iperf3 port: the probed Service's second port, its endpoints' target port, and the DNAT rule's. */
export const BULK_PORT = 5201;
const ROUNDS = Number(process.env['WEFT_BENCH_SVC_BULK_ROUNDS'] ?? 5);
const SECONDS = Number(process.env['WEFT_BENCH_SVC_BULK_SECONDS'] ?? 3);

/** One path probed: a label and the address the client connects to (port BULK_PORT). */
export interface BulkPath { label: string; host: string }

async function gbps(node: string, host: string): Promise<number> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const r = await nsExec(node, ['iperf3', '-c', host, '-p', String(BULK_PORT), '-t', String(SECONDS), '-O', '1', '-J'], { timeoutMs: (SECONDS + 20) * 1000 });
    try {
      const bps = (JSON.parse(r.stdout) as { end?: { sum_received?: { bits_per_second?: number } } }).end?.sum_received?.bits_per_second ?? 0;
      if (r.code === 0 && bps > 0) return bps / 1e9;
    } catch { /* not JSON: retry */ }
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`iperf3 ${node} -> ${host}:${BULK_PORT} failed three times`);
}

/** The median of a[i] / b[i] over rounds (a path and its baseline ran seconds apart in round i, so a slow round moves both). Pure. */
export function perRoundRatio(a: readonly number[], b: readonly number[]): number {
  const rs = a.map((x, i) => x / (b[i] ?? NaN)).filter((r) => Number.isFinite(r));
  return rs.length > 0 ? quantile(rs, 0.5) : NaN;
}

/**
 * Rows: median Gbit/s of each path (min-max of the rounds), the first path's ratio to `direct`'s, and
 * for each [a, b] of `pairs` the median of per-round ratios a / b.
 */
export async function bulkRows(node: string, server: string, label: string, paths: BulkPath[], direct: string, pairs: ReadonlyArray<readonly [string, string]> = []): Promise<BenchResult[]> {
  // One server for every round (-s serves one test at a time; the rounds are sequential).
  const [file = 'ip', ...args] = inNetns(server, ['iperf3', '-s', '-p', String(BULK_PORT)]);
  const srv = spawn(file, args, { stdio: 'ignore' });
  try {
    for (let i = 0; i < 50 && (await nsExec(server, ['ss', '-Htln', `sport = :${BULK_PORT}`])).stdout.trim() === ''; i++) await new Promise((r) => setTimeout(r, 50));
    const got = new Map<string, number[]>(paths.map((p) => [p.label, []]));
    // Each round starts with another path: no path is always the first stream after a pause.
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < paths.length; i++) {
        const p = paths[(i + r) % paths.length] as BulkPath;
        got.get(p.label)?.push(await gbps(node, p.host));
      }
    }
    const med = (l: string) => quantile(got.get(l) ?? [], 0.5);
    const spread = (l: string) => { const xs = got.get(l) ?? []; return `${round(Math.min(...xs), 2)}-${round(Math.max(...xs), 2)}`; };
    const base = med(direct);
    const rows: BenchResult[] = paths.map((p, i) => ({
      name: `${label}: single-stream bulk TCP ${p.label} (iperf3, median of ${ROUNDS} interleaved rounds of ${SECONDS} s)`,
      value: round(med(p.label), 2), unit: `Gbit/s (rounds ${spread(p.label)})`, ratio: round(med(p.label) / base, 3),
      ...(i === 0 ? { target: '>= 0.95x direct', ok: med(p.label) / base >= 0.95 } : {}),
    }));
    for (const [a, b] of pairs) {
      const xs = got.get(a) ?? [];
      const ys = got.get(b) ?? [];
      const each = xs.map((x, i) => round(x / (ys[i] ?? NaN), 3)).join(' ');
      rows.push({ name: `${label}: single-stream bulk ${a} / ${b} (median of ${ROUNDS} per-round ratios: ${each})`, value: round(perRoundRatio(xs, ys), 3), unit: 'x' });
    }
    return rows;
  } finally {
    srv.kill('SIGKILL');
  }
}
