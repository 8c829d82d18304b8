// `npm run bench -- pod-instructions`: what one kube-flannel pod costs in instructions, every process
// of it counted (cachegrind, children traced), weft's bundles against the reference plugins (flannel's
// CNI plugin v0.9.1 in front of Debian's bridge, host-local and portmap) and `node -e 0`. Instruction
// counts repeat whatever the load, so this says on a busy machine what `bulk` can say only on a quiet
// one: whether weft's pod can cost what the reference's costs (issue 29's bulk target). User-space only:
// the kernel's share (exec, page faults, netlink, veth creation) is not counted on either side.
// WEFT_BENCH_RUNS (default 2) measured pods per side, after 2 warm-up pods that write weft's code caches
// under valgrind (valgrind reports another CPU, so caches written without it would be rewritten).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CniRunner, type ConfList } from '../../testkit/cni-runner.ts';
import { addNetnsSync, deleteNetnsSync, uniqueNetnsName } from '../../testkit/netns.ts';
import { REFERENCE_FLANNEL } from './bulk.ts';
import { cachegrindPrefix, readCachegrindDir } from './cachegrind.ts';
import { benchNetns } from './netns.ts';
import { DIST, distBin, loadAverage, median, round, type BenchResult } from './util.ts';

const WARMUP = 2;
const PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
type Label = 'weft' | 'reference';

/** The side's conflist (kube-flannel's, as bulk.ts runs it) and bin dir, with files under `dir`. */
function sideConf(label: Label, index: number, dir: string): { conf: ConfList; binDir: string } {
  const subnetFile = join(dir, 'subnet.env');
  writeFileSync(subnetFile, `FLANNEL_NETWORK=10.${140 + index}.0.0/16\nFLANNEL_SUBNET=10.${140 + index}.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n`);
  let binDir = DIST;
  if (label === 'reference') {
    binDir = join(dir, 'bin');
    mkdirSync(binDir);
    symlinkSync(REFERENCE_FLANNEL, join(binDir, 'flannel'));
    for (const p of ['bridge', 'host-local', 'portmap']) symlinkSync(join('/usr/lib/cni', p), join(binDir, p));
  }
  const conf: ConfList = {
    cniVersion: '0.4.0', name: `icount${index}`,
    plugins: [
      { type: 'flannel', subnetFile, dataDir: join(dir, 'flannel'), ipam: { dataDir: join(dir, 'ipam') }, delegate: { bridge: `cni${index}`, hairpinMode: true, isDefaultGateway: true } },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  return { conf, binDir };
}

interface Counted { add: number[]; del: number[]; split: string }

/** ADD then DEL of `runs` pods (after the warm-ups) on one side, each plugin process under cachegrind. */
async function countSide(label: Label, index: number, node: string, runs: number, scratch: string): Promise<Counted> {
  const dir = join(scratch, label);
  mkdirSync(dir);
  const { conf, binDir } = sideConf(label, index, dir);
  const out: Counted = { add: [], del: [], split: '' };
  for (let i = 0; i < WARMUP + runs; i++) {
    const pod = uniqueNetnsName('weft-b-ic');
    addNetnsSync(pod);
    try {
      const att = { containerId: `icount-${label}-${i}`, netns: `/var/run/netns/${pod}`, ifName: 'eth0', runtimeConfig: { portMappings: [] } };
      const dirs = { add: join(dir, `add-${i}`), del: join(dir, `del-${i}`) };
      for (const verb of ['add', 'del'] as const) {
        mkdirSync(dirs[verb]);
        const runner = new CniRunner(conf, { binDirs: [binDir], env: { PATH }, timeoutMs: 300_000, wrap: ['nsenter', `--net=${node}`, ...cachegrindPrefix(dirs[verb])] });
        await (verb === 'add' ? runner.add(att) : runner.del(att));
      }
      if (i < WARMUP) continue;
      const add = readCachegrindDir(dirs.add);
      const del = readCachegrindDir(dirs.del);
      out.add.push(add.total);
      out.del.push(del.total);
      const fmt = (ps: typeof add.processes): string => ps.map((p) => `${p.program} ${round(p.instructions / 1e6, 1)} M`).join(', ');
      out.split = `ADD: ${fmt(add.processes)}; DEL: ${fmt(del.processes)}`;
    } finally {
      deleteNetnsSync(pod);
    }
  }
  return out;
}

/** Instructions of `node -e 0` in the same clean environment, median of 3. */
function countNode(node: string, scratch: string): number {
  const counts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const d = join(scratch, `node-${i}`);
    mkdirSync(d);
    execFileSync('nsenter', [`--net=${node}`, 'env', '-i', `PATH=${PATH}`, ...cachegrindPrefix(d), 'node', '-e', '0'], { stdio: 'ignore' });
    counts.push(readCachegrindDir(d).total);
  }
  return median(counts);
}

/** Runs the benchmark; needs root, valgrind, dist/bin and the reference flannel CNI plugin (scripts/flannel-cni-setup.sh). */
export async function benchPodInstructions(runs = Number(process.env['WEFT_BENCH_RUNS'] ?? 2)): Promise<BenchResult[]> {
  for (const b of ['flannel', 'bridge', 'host-local', 'portmap']) distBin(b);
  readFileSync(REFERENCE_FLANNEL); // throws with the path when scripts/flannel-cni-setup.sh has not run
  try { execFileSync('valgrind', ['--version'], { stdio: 'ignore' }); } catch { throw new Error('pod-instructions needs valgrind (apt-get install valgrind)'); }
  const load0 = loadAverage();
  const scratch = mkdtempSync(join(tmpdir(), 'weft-bench-icount-'));
  const node = benchNetns();
  try {
    const weft = await countSide('weft', 0, node.path, runs, scratch);
    const ref = await countSide('reference', 1, node.path, runs, scratch);
    const bare = countNode(node.path, scratch);
    process.stderr.write(`  weft ${weft.split}\n  reference ${ref.split}\n  load ${load0} -> ${loadAverage()} (instruction counts do not depend on it)\n`);
    const m = (xs: number[]): number => round(median(xs) / 1e6, 1);
    const rows: BenchResult[] = [{ name: 'node -e 0', value: round(bare / 1e6, 1), unit: 'M instructions' }];
    for (const verb of ['add', 'del'] as const) {
      const V = verb.toUpperCase();
      rows.push(
        { name: `weft pod ${V} (flannel + portmap processes)`, value: m(weft[verb]), unit: 'M instructions', baseline: `reference pod ${V} (${m(ref[verb])} M, 4 processes)`, ratio: round(median(weft[verb]) / median(ref[verb])) },
        { name: `weft pod ${V} over node -e 0`, value: m(weft[verb]), unit: 'M instructions', baseline: `node -e 0 (${round(bare / 1e6, 1)} M)`, ratio: round(median(weft[verb]) / bare) },
        { name: `node -e 0 over the reference pod ${V}`, value: round(bare / 1e6, 1), unit: 'M instructions', baseline: `reference pod ${V} (${m(ref[verb])} M)`, ratio: round(bare / median(ref[verb])) },
      );
    }
    return rows;
  } finally {
    node.remove();
    rmSync(scratch, { recursive: true, force: true });
  }
}
