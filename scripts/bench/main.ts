// `npm run bench [-- name...]`: runs the suite's benchmarks and writes bench-results/<stamp>.{md,json}.
// Every figure is a ratio to a baseline measured in the same run (node -e 0, the reference Go
// plugins in /usr/lib/cni, a bare veth path), never an absolute number compared across runs.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { join } from 'node:path';
import { benchLoopback } from './loopback.ts';
import { benchBridge } from './bridge.ts';
import { benchHostLocal } from './host-local.ts';
import { benchWeftd } from './weftd.ts';
import { benchPortmap } from './portmap.ts';
import { benchBandwidth } from './bandwidth.ts';
import { benchFirewall } from './firewall.ts';
import { benchTuning } from './tuning.ts';
import { benchDataplane } from './dataplane.ts';
import { benchUdp } from './udp.ts';
import { benchMixedFlanneld } from './mixed-flanneld.ts';
import { benchStandalone } from './standalone.ts';
import { benchBulk } from './bulk.ts';
import { benchPodInstructions } from './pod-instructions.ts';
import { benchServices } from './services.ts';
import { benchServicePeers } from './services-peers.ts';
import { benchServicesPod } from './services-pod.ts';
import { benchSizes } from './sizes.ts';
import { benchNetpol } from './netpol.ts';
import { ROOT, type BenchResult } from './util.ts';

type Bench = () => BenchResult[] | Promise<BenchResult[]>;

const BENCHES: Record<string, Bench> = {
  loopback: () => benchLoopback(),
  bridge: () => benchBridge(),
  'host-local': () => benchHostLocal(),
  weftd: () => benchWeftd(),
  // The Kubernetes lease source beside etcd's figures of the same run (both also in `weftd`).
  'weftd-kube': () => benchWeftd(['etcd', 'kube']),
  portmap: () => benchPortmap(),
  bandwidth: () => benchBandwidth(),
  firewall: () => benchFirewall(),
  tuning: () => benchTuning(),
  dataplane: () => benchDataplane(),
  udp: () => benchUdp(),
  'mixed-flanneld': () => benchMixedFlanneld(),
  standalone: () => benchStandalone(),
  // 50 pods ADDed, then DELed, at once through the kube-flannel conflist, against the reference plugins (issue 29).
  bulk: () => benchBulk(),
  // One kube-flannel pod's instructions, every process counted (cachegrind), weft against the reference: load-independent (issue 29).
  'pod-instructions': () => benchPodInstructions(),
  services: () => benchServices(),
  // weftd --service-proxy beside kube-proxy nftables and iptables mode, from a real kube-apiserver (issue 30).
  'services-peers': () => benchServicePeers(),
  // ClusterIP against the direct pod path from a pod namespace, 1 and 10,000 Services interleaved (issue 30).
  'services-pod': () => benchServicesPod(),
  // Bytes of each bundle in dist/bin (no timing; loopback has a ceiling).
  sizes: () => benchSizes(),
  netpol: () => benchNetpol(),
};

function formatTable(sections: Array<{ bench: string; rows: BenchResult[] }>): string {
  const lines = ['| benchmark | figure | value | baseline | ratio | target |', '|---|---|---|---|---|---|'];
  for (const { bench, rows } of sections) {
    for (const r of rows) {
      const target = r.target === undefined ? '' : `${r.target} ${r.ok === false ? 'MISSED' : 'met'}`;
      lines.push(`| ${bench} | ${r.name} | ${r.value} ${r.unit} | ${r.baseline ?? ''} | ${r.ratio ?? ''} | ${target} |`);
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = wanted.filter((w) => !(w in BENCHES));
  if (unknown.length > 0) throw new Error(`unknown benchmark(s) ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  if (process.getuid?.() !== 0) throw new Error('benchmarks create network namespaces: run as root');
  const names = wanted.length > 0 ? wanted : Object.keys(BENCHES);
  const sections: Array<{ bench: string; rows: BenchResult[] }> = [];
  for (const name of names) {
    process.stderr.write(`bench ${name} ...\n`);
    const run = BENCHES[name];
    if (run !== undefined) sections.push({ bench: name, rows: await run() });
  }
  const table = formatTable(sections);
  process.stdout.write(`${table}\n`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(ROOT, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const meta = { date: new Date().toISOString(), host: hostname(), cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version };
  writeFileSync(join(dir, `${stamp}.json`), JSON.stringify({ meta, sections }, null, 2));
  writeFileSync(join(dir, `${stamp}.md`), `# weft benchmarks ${meta.date}\n\n${meta.cpus} x ${meta.cpu ?? '?'}, node ${meta.node}\n\n${table}\n`);
  process.stderr.write(`wrote bench-results/${stamp}.{md,json}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
