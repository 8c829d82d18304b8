// What a slow join waited behind, from the weftd logs the bench runs at --log-level debug: for a join
// over the target, the slowest node's log records between the lease write and its route appearing
// (the lease event, each pass with its slices and how late its trigger fired, long GCs), printed
// beside the figures so that an outlier is explained by the run that showed it.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster } from '../../testkit/cluster.ts';

/** One join as the bench saw it: write time (epoch ms), subnet, latency per node. */
export interface JoinSeen {
  subnet: string;
  writtenAt: number;
  perNodeMs: number[];
}

/**
 * Records of a weftd log between `from` and `to` (epoch ms) that explain a pass's wait, each led by
 * its time relative to `at0` (pure): every record but other peers' lease events and programmed lines.
 */
export function explainWindow(log: string, at0: number, from: number, to: number, subnet: string): string[] {
  const out: string[] = [];
  for (const line of log.split('\n')) {
    if (line === '' || line[0] !== '{') continue;
    let rec: { ts?: string; msg?: string; subnet?: string; change?: string };
    try { rec = JSON.parse(line) as typeof rec; } catch { continue; }
    const at = Date.parse(rec.ts ?? '');
    if (!(at >= from && at <= to)) continue;
    const keep = rec.msg === 'lease event' ? rec.subnet === subnet : rec.msg === 'programmed' ? (rec.change ?? '').includes(` ${subnet} `) : true;
    if (keep) out.push(`${at - at0 >= 0 ? '+' : ''}${Math.round(at - at0)} ms ${line}`);
  }
  return out;
}

/** Prints, for each join slower than `overMs` (and the slowest one), the slowest node's log window. */
export function explainSlowJoins(c: Cluster, tag: string, joins: JoinSeen[], overMs: number, write: (s: string) => void): void {
  const slowest = joins.reduce<JoinSeen | undefined>((m, j) => (m === undefined || Math.max(...j.perNodeMs) > Math.max(...m.perNodeMs) ? j : m), undefined);
  const pick = joins.filter((j) => j === slowest || Math.max(...j.perNodeMs) > overMs);
  const logs = new Map<number, string>();
  for (const j of pick) {
    const worst = Math.max(...j.perNodeMs);
    const i = j.perNodeMs.indexOf(worst);
    const node = c.nodes[i];
    if (node === undefined) continue;
    const log = logs.get(i) ?? c.weftdLog(node);
    logs.set(i, log);
    write(`  ${tag}: join ${j.subnet}: ${j.perNodeMs.map((x) => x.toFixed(0)).join(' / ')} ms on the nodes; node ${i + 1}'s log from the write on:\n`);
    // 300 ms before the write too: a pass started just before it is what the join may wait behind.
    for (const l of explainWindow(log, j.writtenAt, j.writtenAt - 300, j.writtenAt + worst + 5, j.subnet)) write(`    ${l.slice(0, 400)}\n`);
  }
}

/** Copies every node's weftd log into WEFT_BENCH_LOG_DIR (when set) as <store>-node<N>.log. */
export function keepLogs(c: Cluster, store: string): void {
  const dir = process.env['WEFT_BENCH_LOG_DIR'];
  if (dir === undefined || dir === '') return;
  mkdirSync(dir, { recursive: true });
  for (const n of c.nodes) copyFileSync(join(n.dir, 'weftd.log'), join(dir, `${store}-node${n.id}.log`));
}
