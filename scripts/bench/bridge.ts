// Benchmark: bridge + host-local with ipMasq, ADD and DEL wall time against `node -e 0` and against the
// reference Go plugins in the same run, and ADD with 100 pods on the bridge against ADD with none.
// Plugins run inside a node namespace (`ip netns exec`); that wrapper's own cost (`ip netns exec <node>
// true`, measured in the same run) is subtracted so the ratios compare the plugins themselves.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchNetns } from './netns.ts';
import { nsCommand, distBin, DIST, loadAverage, measureOnce, median, NODE_BASELINE, round, timeOnce, withCpuReport, type BenchResult, type Command } from './util.ts';

const REF_DIR = '/usr/lib/cni';

interface Setup {
  node: { name: string; path: string; remove: () => void };
  pods: Array<{ name: string; path: string; remove: () => void }>;
  dataDir: string;
}

function conf(dataDir: string, subnet: string): string {
  return JSON.stringify({
    cniVersion: '1.0.0', name: 'benchnet', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true,
    ipam: { type: 'host-local', subnet, dataDir, routes: [{ dst: '0.0.0.0/0' }] },
  });
}

function cmd(node: string, bin: string, cniPath: string, command: string, id: string, podPath: string, input: string): Command {
  return nsCommand(node, [bin], {
    input,
    env: { PATH: process.env['PATH'], CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: podPath, CNI_IFNAME: 'eth0', CNI_PATH: cniPath },
  });
}

function setup(pods: number): Setup {
  return { node: benchNetns(), pods: Array.from({ length: pods }, () => benchNetns()), dataDir: mkdtempSync(join(tmpdir(), 'weft-bench-br-')) };
}

function teardown(s: Setup): void {
  for (const p of s.pods) p.remove();
  s.node.remove();
  rmSync(s.dataDir, { recursive: true, force: true });
}

/** Runs the bridge benchmark; needs root, a built dist/bin/{bridge,host-local} and the reference plugins. */
export function benchBridge(runs = 15, crowd = 100): BenchResult[] {
  const ours = distBin('bridge');
  distBin('host-local');
  const hasRef = existsSync(join(REF_DIR, 'bridge'));
  const load0 = loadAverage();
  const empty = setup(hasRef ? 2 : 1);
  const full = setup(crowd + 1);
  const refNode = hasRef ? setup(1) : undefined;
  try {
    const cEmpty = conf(empty.dataDir, '10.88.0.0/16');
    const cFull = conf(full.dataDir, '10.89.0.0/16');
    const cRef = refNode ? conf(refNode.dataDir, '10.90.0.0/16') : '';
    process.stderr.write(`  putting ${crowd} pods on the crowded bridge ...\n`);
    for (let i = 0; i < crowd; i++) {
      timeOnce(cmd(full.node.name, ours, DIST, 'ADD', `crowd${i}`, full.pods[i + 1]?.path ?? '', cFull));
    }
    const wrap: Command = nsCommand(empty.node.name, ['true']);
    const s = { base: [] as number[], wrap: [] as number[], add: [] as number[], del: [] as number[], addFull: [] as number[], refAdd: [] as number[], refDel: [] as number[] };
    const pod0 = empty.pods[0]?.path ?? '';
    const podFull = full.pods[0]?.path ?? '';
    for (let i = 0; i < runs + 2; i++) {
      const keep = i >= 2; // two warm-up rounds
      const t = (xs: number[], c: Command): void => {
        const ms = timeOnce(c);
        if (keep) xs.push(ms);
      };
      t(s.base, NODE_BASELINE);
      t(s.wrap, wrap);
      t(s.add, cmd(empty.node.name, ours, DIST, 'ADD', `b${i}`, pod0, cEmpty));
      t(s.del, cmd(empty.node.name, ours, DIST, 'DEL', `b${i}`, pod0, cEmpty));
      t(s.addFull, cmd(full.node.name, ours, DIST, 'ADD', `f${i}`, podFull, cFull));
      timeOnce(cmd(full.node.name, ours, DIST, 'DEL', `f${i}`, podFull, cFull));
      if (refNode) {
        const rp = refNode.pods[0]?.path ?? '';
        t(s.refAdd, cmd(refNode.node.name, join(REF_DIR, 'bridge'), REF_DIR, 'ADD', `r${i}`, rp, cRef));
        t(s.refDel, cmd(refNode.node.name, join(REF_DIR, 'bridge'), REF_DIR, 'DEL', `r${i}`, rp, cRef));
      }
    }
    // CPU rounds: the same commands with node's CPU time reported at exit (steadier than wall time on a busy machine).
    const cpu = { base: [] as number[], add: [] as number[], del: [] as number[], version: [] as number[] };
    const version: Command = { cmd: ours, args: [], input: cEmpty, env: { PATH: process.env['PATH'], CNI_COMMAND: 'VERSION' } };
    const versionWall: number[] = [];
    const baseWall: number[] = [];
    for (let i = 0; i < runs; i++) {
      // The bundle's start-up alone (VERSION, no netns wrapper), next to node -e 0 in the same round.
      baseWall.push(timeOnce(NODE_BASELINE));
      versionWall.push(timeOnce(version));
      cpu.version.push(measureOnce(withCpuReport(version)).cpuMs);
      cpu.base.push(measureOnce(withCpuReport(NODE_BASELINE)).cpuMs);
      cpu.add.push(measureOnce(withCpuReport(cmd(empty.node.name, ours, DIST, 'ADD', `c${i}`, pod0, cEmpty))).cpuMs);
      cpu.del.push(measureOnce(withCpuReport(cmd(empty.node.name, ours, DIST, 'DEL', `c${i}`, pod0, cEmpty))).cpuMs);
    }
    const w = median(s.wrap);
    const net = (xs: number[]): number => median(xs) - w;
    const base = median(s.base);
    const add = net(s.add);
    const del = net(s.del);
    const addFull = net(s.addFull);
    const rows: BenchResult[] = [
      { name: 'node -e 0', value: round(base), unit: 'ms' },
      { name: 'ip netns exec wrapper (subtracted below)', value: round(w), unit: 'ms' },
      { name: 'bridge ADD (ipMasq, host-local in-process)', value: round(add), unit: 'ms', baseline: 'node -e 0', ratio: round(add / base), target: '<= 1.5', ok: add / base <= 1.5 },
      { name: `bridge ADD with ${crowd} pods on the bridge`, value: round(addFull), unit: 'ms', baseline: 'bridge ADD, empty bridge', ratio: round(addFull / add), target: '<= 1.1', ok: addFull / add <= 1.1 },
      { name: 'bridge DEL', value: round(del), unit: 'ms', baseline: 'node -e 0', ratio: round(del / base) },
      { name: 'bridge VERSION (start-up)', value: round(median(versionWall)), unit: 'ms', baseline: 'node -e 0', ratio: round(median(versionWall) / median(baseWall)) },
      { name: 'CPU node -e 0 (user+sys, all threads)', value: round(median(cpu.base)), unit: 'ms' },
      { name: 'CPU bridge VERSION', value: round(median(cpu.version)), unit: 'ms', baseline: 'CPU node -e 0', ratio: round(median(cpu.version) / median(cpu.base)) },
      { name: 'CPU bridge ADD', value: round(median(cpu.add)), unit: 'ms', baseline: 'CPU node -e 0', ratio: round(median(cpu.add) / median(cpu.base)) },
      { name: 'CPU bridge DEL', value: round(median(cpu.del)), unit: 'ms', baseline: 'CPU node -e 0', ratio: round(median(cpu.del) / median(cpu.base)) },
      { name: 'load average (1 min) at start / end', value: load0, unit: `/ ${loadAverage()}` },
    ];
    if (refNode) {
      const refAdd = net(s.refAdd);
      const refDel = net(s.refDel);
      rows.push(
        { name: 'reference bridge ADD (Go)', value: round(refAdd), unit: 'ms', baseline: 'node -e 0', ratio: round(refAdd / base) },
        { name: 'reference bridge DEL (Go)', value: round(refDel), unit: 'ms', baseline: 'node -e 0', ratio: round(refDel / base) },
        { name: 'bridge ADD vs reference ADD', value: round(add), unit: 'ms', baseline: 'reference ADD', ratio: round(add / refAdd) },
        { name: 'bridge DEL vs reference DEL', value: round(del), unit: 'ms', baseline: 'reference DEL', ratio: round(del / refDel), target: '<= 1.3', ok: del / refDel <= 1.3 },
      );
    }
    return rows;
  } finally {
    teardown(empty);
    teardown(full);
    if (refNode) teardown(refNode);
  }
}
