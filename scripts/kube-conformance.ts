// The upstream Kubernetes e2e tests against the kit's 3-node kubelet cluster networked by weft's
// DaemonSet: `e2e.test` and agnhost v1.34.4 (scripts/kube-e2e-setup.sh), agnhost's image
// (scripts/agnhost-image.sh) imported into every node, deploy/weft.yaml applied as users apply it,
// then e2e.test run from the control plane's namespace with the admin kubeconfig. Prints ginkgo's
// summary (passed / failed / skipped) and keeps its JUnit report. Not part of npm test (minutes).
//   node --import tsx scripts/kube-conformance.ts [--focus REGEX] [--skip REGEX] [--report-dir DIR] [--dry-run] [--service-proxy]
// --service-proxy: weftd --service-proxy implements Services instead of the kit's one DNAT rule for `kubernetes`.
// Default focus: `[sig-network] Networking Granular Checks: Pods`; default skip: SCTP (this kernel has no SCTP sockets).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KUBECTL, KubeCluster } from '../testkit/kube-cluster/cluster.ts';
import { formatCensus } from '../testkit/kube-cluster/census.ts';
import { buildWeftImageArchive } from '../testkit/kube-cluster/image.ts';
import { weftManifestImage, weftManifestObjects, WEFT_MANIFEST } from '../testkit/kube-cluster/manifest.ts';
import { kubeClusterMissing } from '../testkit/kube-cluster/requirements.ts';
import { nsRun } from '../testkit/topology.ts';

const ROOT = join(import.meta.dirname, '..');
const CACHE = process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft';
const E2E_DIR = join(CACHE, 'go-bin', 'kube-e2e-v1.34.4');
const AGNHOST_TAR = join(CACHE, 'images', 'agnhost-2.56.tar');
const started = Date.now();
const step = (m: string): void => void process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${m}\n`);

const { values: o } = parseArgs({ options: {
  focus: { type: 'string', default: '\\[sig-network\\] Networking Granular Checks: Pods' },
  skip: { type: 'string', default: 'SCTP' },
  'report-dir': { type: 'string', default: '' },
  'dry-run': { type: 'boolean', default: false },
  'service-proxy': { type: 'boolean', default: false },
} });

/**
 * deploy/weft.yaml with weftd --service-proxy in place of the kit's one DNAT rule for the `kubernetes`
 * Service (docs/services.md): Services and EndpointSlices readable by weft's ClusterRole, and weftd
 * pointed at the API server's own address (it programs the Service it would otherwise dial).
 */
function serviceProxyManifest(apiIp: string): string {
  const objs = weftManifestObjects().map((x) => structuredClone(x)) as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const x of objs) {
    if (x['kind'] === 'ClusterRole') {
      (x['rules'] as unknown[]).push({ apiGroups: [''], resources: ['services', 'endpoints'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] });
    }
    if (x['kind'] === 'DaemonSet') {
      const c = (x['spec']['template']['spec']['containers'] as Array<{ args: string[]; env?: unknown[] }>)[0];
      if (!c) throw new Error('no weftd container');
      c.args.push('--service-proxy');
      c.env = [...(c.env ?? []), { name: 'KUBERNETES_SERVICE_HOST', value: apiIp }, { name: 'KUBERNETES_SERVICE_PORT', value: '6443' }];
    }
  }
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs });
}

/** Runs argv with its output passed through; resolves with the exit code. */
function pass(argv: string[]): Promise<number> {
  return new Promise((res) => {
    const c = spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit'] });
    c.on('close', (code) => res(code ?? 1));
  });
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
    k = await KubeCluster.create({ nodes: 3, images: [archive, AGNHOST_TAR], apiServiceDnat: !o['service-proxy'], progress: (m) => step(`  ${m}`) });
    const c = k;
    await c.waitFor('nodes with a podCIDR', async () => (await c.nodeStatuses()).every((n) => n.podCidr !== undefined), 60_000);
    // The API server proxies to pods (`/proxy` of pods and Services): on a real cluster it runs on a
    // node with the CNI's routes; the kit's control plane namespace is no node, so it gets one route per node's podCIDR.
    for (const st of await c.nodeStatuses()) {
      const n = c.nodes.find((x) => x.name === st.name);
      if (n && st.podCidr !== undefined) await nsRun(c.control.netns, ['ip', 'route', 'replace', st.podCidr, 'via', n.ip]);
    }
    if (o['service-proxy']) await c.mustKubectl(['apply', '-f', '-'], serviceProxyManifest(c.control.ip));
    else await c.mustKubectl(['apply', '-f', WEFT_MANIFEST]);
    await c.waitFor('every node Ready', async () => (await c.nodeStatuses()).every((n) => n.ready), 180_000, 250);
    step('deploy/weft.yaml applied, every node Ready; running e2e.test');
    const argv = ['ip', 'netns', 'exec', c.control.netns, join(E2E_DIR, 'e2e.test'), '--kubeconfig', c.control.kubeconfig,
      '--provider', 'skeleton', '--kubectl-path', KUBECTL, '--report-dir', reportDir, '--ginkgo.focus', o.focus,
      ...(o.skip !== '' ? ['--ginkgo.skip', o.skip] : []), ...(o['dry-run'] ? ['--ginkgo.dry-run'] : []),
      '--ginkgo.no-color', '--ginkgo.timeout', process.env['WEFT_E2E_TIMEOUT'] ?? '2h', '--dump-logs-on-failure=false', '--e2e-verify-service-account=false', '--minStartupPods', '0'];
    code = await pass(argv);
    step(`e2e.test exited ${code}; JUnit report in ${reportDir}`);
    const junit = join(reportDir, 'junit_01.xml');
    if (existsSync(junit)) {
      const x = readFileSync(junit, 'utf8');
      const attr = (n: string): string => new RegExp(`<testsuite [^>]*${n}="(\\d+)"`).exec(x)?.[1] ?? '?';
      process.stdout.write(`junit: tests ${attr('tests')}, failures ${attr('failures')}, errors ${attr('errors')}, skipped ${attr('skipped')}\n`);
    }
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
