// The upstream Kubernetes e2e tests against the kit's 3-node kubelet cluster networked by weft's
// DaemonSet: `e2e.test` and agnhost v1.34.4 (scripts/kube-e2e-setup.sh), agnhost's image
// (scripts/agnhost-image.sh) imported into every node, deploy/weft.yaml applied as users apply it,
// then e2e.test run from the control plane's namespace with the admin kubeconfig. Prints ginkgo's
// summary (passed / failed / skipped) and keeps its JUnit report. Not part of npm test (minutes).
//   node --import tsx scripts/kube-conformance.ts [--focus REGEX]... [--skip REGEX] [--report-dir DIR] [--dry-run]
//        [--service-proxy] [--network-policy] [--dns] [--help]
// --service-proxy: weftd --service-proxy implements Services instead of the kit's one DNAT rule for `kubernetes`.
// --network-policy: weftd --network-policy. --dns: CoreDNS as kube-dns (implies --service-proxy).
// --focus more than once: one e2e.test per focus, run at once against the one cluster.
// Default focus: `[sig-network] Networking Granular Checks: Pods`; default skip: SCTP (this kernel has no SCTP sockets).
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KUBECTL, KubeCluster } from '../testkit/kube-cluster/cluster.ts';
import { formatCensus } from '../testkit/kube-cluster/census.ts';
import { buildWeftImageArchive } from '../testkit/kube-cluster/image.ts';
import { weftManifestImage } from '../testkit/kube-cluster/manifest.ts';
import { kubeClusterMissing } from '../testkit/kube-cluster/requirements.ts';
import { nsRun } from '../testkit/topology.ts';

const ROOT = join(import.meta.dirname, '..');
const CACHE = process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft';
const E2E_DIR = join(CACHE, 'go-bin', 'kube-e2e-v1.34.4');
const AGNHOST_TAR = join(CACHE, 'images', 'agnhost-2.56.tar');
const started = Date.now();
const step = (m: string): void => void process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${m}\n`);

const USAGE = `usage: node --import tsx scripts/kube-conformance.ts [--focus REGEX]... [--skip REGEX] [--report-dir DIR]
         [--dry-run] [--service-proxy] [--network-policy] [--dns] [--help]
  --focus REGEX       e2e specs to run; more than once: one e2e.test per focus, at once
                      (default: \\[sig-network\\] Networking Granular Checks: Pods)
  --skip REGEX        e2e specs to skip (default: SCTP; this kernel has no SCTP sockets)
  --report-dir DIR    where the JUnit reports go (default: a new directory under the temp dir)
  --dry-run           e2e.test --ginkgo.dry-run: lists the selected specs (the cluster is still built)
  --service-proxy     weftd --service-proxy implements Services
  --network-policy    weftd --network-policy enforces NetworkPolicy
  --dns               CoreDNS as kube-dns (implies --service-proxy)
`;

/** The flags, or usage on stderr and exit 2 for one it does not know (before anything starts). */
function parseFlags(): ReturnType<typeof parseFlagsStrict> {
  try {
    return parseFlagsStrict();
  } catch (e) {
    process.stderr.write(`kube-conformance: ${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

// Its return type is inferred from the options table, so that o.focus and the rest stay typed.
function parseFlagsStrict() {
  return parseArgs({ options: {
  help: { type: 'boolean', short: 'h', default: false },
  focus: { type: 'string', multiple: true, default: ['\\[sig-network\\] Networking Granular Checks: Pods'] },
  skip: { type: 'string', default: 'SCTP' },
  'report-dir': { type: 'string', default: '' },
  'dry-run': { type: 'boolean', default: false },
  'service-proxy': { type: 'boolean', default: false },
  'network-policy': { type: 'boolean', default: false },
  dns: { type: 'boolean', default: false },
} }).values;
}

const o = parseFlags();
if (o.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const serviceProxy = o['service-proxy'] || o.dns;

/** Runs argv with its output passed through (or into `logFile`); resolves with the exit code. */
function pass(argv: string[], logFile?: string): Promise<number> {
  return new Promise((res) => {
    const out = logFile !== undefined ? openSync(logFile, 'a') : 'inherit';
    const c = spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', out, out] });
    if (typeof out === 'number') closeSync(out);
    c.on('close', (code) => res(code ?? 1));
  });
}

/** The counts of a JUnit report e2e.test wrote. */
function junitSummary(file: string): string {
  if (!existsSync(file)) return 'no JUnit report';
  const x = readFileSync(file, 'utf8');
  const attr = (n: string): string => new RegExp(`<testsuite [^>]*${n}="(\\d+)"`).exec(x)?.[1] ?? '?';
  return `tests ${attr('tests')}, failures ${attr('failures')}, errors ${attr('errors')}, skipped ${attr('skipped')}`;
}

async function main(): Promise<void> {
  const missing = kubeClusterMissing();
  if (missing !== undefined) throw new Error(`cannot run: ${missing}`);
  if (!existsSync(join(E2E_DIR, 'e2e.test'))) throw new Error(`${E2E_DIR}/e2e.test is missing: run scripts/kube-e2e-setup.sh (a long build)`);
  if ((await pass(['bash', join(ROOT, 'scripts', 'agnhost-image.sh')])) !== 0 || !existsSync(AGNHOST_TAR)) throw new Error('scripts/agnhost-image.sh failed');
  const reportDir = o['report-dir'] !== '' ? o['report-dir'] : mkdtempSync(join(tmpdir(), 'weft-conformance-'));
  mkdirSync(reportDir, { recursive: true });
  const imgDir = mkdtempSync(join(tmpdir(), 'weft-conf-img-'));
  process.on('exit', () => rmSync(imgDir, { recursive: true, force: true }));
  let k: KubeCluster | undefined;
  let code: number;
  try {
    const archive = join(imgDir, 'weft-image.tar');
    await buildWeftImageArchive(imgDir, weftManifestImage(), archive);
    step('weft image built');
    k = await KubeCluster.create({ nodes: 3, images: [archive, AGNHOST_TAR], apiServiceDnat: !serviceProxy, dns: o.dns, progress: (m) => step(`  ${m}`) });
    const c = k;
    await c.waitFor('nodes with a podCIDR', async () => (await c.nodeStatuses()).every((n) => n.podCidr !== undefined), 60_000);
    // The API server proxies to pods (`/proxy` of pods and Services): on a real cluster it runs on a
    // node with the CNI's routes; the kit's control plane namespace is no node, so it gets one route per node's podCIDR.
    for (const st of await c.nodeStatuses()) {
      const n = c.nodes.find((x) => x.name === st.name);
      if (n && st.podCidr !== undefined) await nsRun(c.control.netns, ['ip', 'route', 'replace', st.podCidr, 'via', n.ip]);
    }
    await c.applyWeft({ serviceProxy, networkPolicy: o['network-policy'] });
    await c.waitFor('every node Ready', async () => (await c.nodeStatuses()).every((n) => n.ready), 180_000, 250);
    step(`deploy/weft.yaml applied${serviceProxy ? ' (--service-proxy)' : ''}${o['network-policy'] ? ' (--network-policy)' : ''}, every node Ready`);
    if (o.dns) step(`CoreDNS Ready as kube-dns in ${await c.deployDns()} ms`);
    // Several --focus: one e2e.test each, at once, against the same cluster (each in namespaces of its own).
    const focuses = o.focus;
    step(`running e2e.test${focuses.length > 1 ? ` x ${focuses.length} at once (logs in ${reportDir}/e2e-<n>.log)` : ''}`);
    const codes = await Promise.all(focuses.map(async (focus, i) => {
      const dir = focuses.length > 1 ? join(reportDir, `run-${i + 1}`) : reportDir;
      mkdirSync(dir, { recursive: true });
      const argv = ['ip', 'netns', 'exec', c.control.netns, join(E2E_DIR, 'e2e.test'), '--kubeconfig', c.control.kubeconfig,
        '--provider', 'skeleton', '--kubectl-path', KUBECTL, '--report-dir', dir, '--ginkgo.focus', focus,
        ...(o.skip !== '' ? ['--ginkgo.skip', o.skip] : []), ...(o['dry-run'] ? ['--ginkgo.dry-run'] : []),
        '--ginkgo.no-color', '--ginkgo.timeout', process.env['WEFT_E2E_TIMEOUT'] ?? '2h', '--dump-logs-on-failure=false', '--e2e-verify-service-account=false', '--minStartupPods', '0'];
      const t0 = Date.now();
      const rc = await pass(argv, focuses.length > 1 ? join(reportDir, `e2e-${i + 1}.log`) : undefined);
      step(`e2e.test ${focuses.length > 1 ? `#${i + 1} ` : ''}(${focus}) exited ${rc} after ${((Date.now() - t0) / 1000).toFixed(0)} s: ${junitSummary(join(dir, 'junit_01.xml'))}`);
      return rc;
    }));
    code = codes.find((x) => x !== 0) ?? 0;
    step(`JUnit reports in ${reportDir}`);
  } finally {
    if (k) {
      k.destroySync();
      step(`teardown; left on the machine: ${formatCensus(k.census())}`);
    }
    rmSync(imgDir, { recursive: true, force: true });
  }
  process.exitCode = code;
}

main().catch((e: unknown) => {
  process.stderr.write(`kube-conformance failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
