// The same inputs through weft's built plugins (dist/bin) and the reference plugins in /usr/lib/cni
// (Debian containernetworking-plugins 1.1.1): ADD must succeed for both or be refused by both. Each
// implementation runs in its own node namespace with its own data dir; every ADD is followed by DEL.
// When both succeed, the result's top-level keys and cniVersion must match too (result format per
// version, e.g. 0.1.0's ip4 block for a config without cniVersion).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execPlugin } from '../../../testkit/cni-runner.ts';
import { createTestNetns, rootOnly, type TestNetns } from '../../../testkit/netns.ts';
import { baseConf, CASES, type Case, type PluginName } from './cases.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const IMPLS = { weft: join(ROOT, 'dist', 'bin'), reference: '/usr/lib/cni' } as const;
type ImplName = keyof typeof IMPLS;

interface Outcome {
  ok: boolean;
  code: number | undefined;
  keys: string;
  version: unknown;
  text: string;
}

interface Env {
  node: TestNetns;
  dataDir: string;
}

const envs = new Map<ImplName, Env>();
let serial = 0;

function withoutUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** The IPAM data dir goes into the config where the plugin reads it. */
function placeDataDir(plugin: PluginName, conf: Record<string, unknown>, dataDir: string): Record<string, unknown> {
  if (plugin !== 'bridge' && plugin !== 'host-local') return conf;
  for (const k of Object.keys(conf)) {
    const v = conf[k];
    if (k.toLowerCase() === 'ipam' && typeof v === 'object' && v !== null && !Array.isArray(v)) conf[k] = { ...v, dataDir: (v as Record<string, unknown>)['dataDir'] ?? dataDir };
  }
  return conf;
}

/** A prevResult for portmap in the wire form of `version` (0.1.0/0.2.0 have no interfaces). */
function prevResultFor(version: string): Record<string, unknown> {
  if (version === '' || version === '0.1.0' || version === '0.2.0') return { cniVersion: version || '0.1.0', ip4: { ip: '10.76.0.5/24', gateway: '10.76.0.1' } };
  const ip: Record<string, unknown> = { address: '10.76.0.5/24', gateway: '10.76.0.1', interface: 1 };
  if (version.startsWith('0.')) ip['version'] = '4';
  return { cniVersion: version, interfaces: [{ name: 'cni0' }, { name: 'eth0', sandbox: '/var/run/netns/x' }], ips: [ip] };
}

function stdinOf(c: Case, dataDir: string): string {
  const base = placeDataDir(c.plugin, baseConf(c.plugin), dataDir);
  if (c.raw !== undefined) return c.raw(base);
  const conf = placeDataDir(c.plugin, withoutUndefined({ ...base, ...c.conf }), dataDir);
  if (c.plugin === 'portmap') {
    const v = typeof conf['cniVersion'] === 'string' ? conf['cniVersion'] : typeof conf['CNIVersion'] === 'string' ? conf['CNIVersion'] : typeof conf['CNIVERSION'] === 'string' ? conf['CNIVERSION'] : '';
    conf['prevResult'] = prevResultFor(v === '0.3.0' || v === '0.3.1' || v === '0.4.0' || v === '1.0.0' || v === '1.1.0' || v === '0.2.0' || v === '0.1.0' ? v : '1.0.0');
  }
  return JSON.stringify(conf);
}

async function invoke(impl: ImplName, c: Case, command: 'ADD' | 'DEL', stdin: string, id: string, netns: string): Promise<Outcome> {
  const e = envs.get(impl);
  assert.ok(e);
  const env: NodeJS.ProcessEnv = { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_IFNAME: 'eth0', CNI_PATH: IMPLS[impl], CNI_ARGS: c.args ?? '' };
  if (netns !== '') env['CNI_NETNS'] = netns;
  const r = await execPlugin(join(IMPLS[impl], c.plugin), env, stdin, { binDirs: [IMPLS[impl]], nodeNetns: e.node.name });
  const code = typeof r.json?.['code'] === 'number' ? (r.json['code'] as number) : undefined;
  // The result's format family: the 0.1.0/0.2.0 blocks or the 0.3+ lists (empty dns/routes aside).
  const keys = r.json === undefined ? '' : Object.keys(r.json).filter((k) => ['ip4', 'ip6', 'ips', 'interfaces'].includes(k)).sort().join(',');
  return { ok: r.code === 0, code, keys, version: r.json?.['cniVersion'], text: (r.stdout || r.stderr).trim().replace(/\s+/g, ' ').slice(0, 160) };
}

/** ADD of one case with one implementation, then DEL with the same input and with the base config. */
async function addThenClean(impl: ImplName, c: Case): Promise<Outcome> {
  const e = envs.get(impl);
  assert.ok(e);
  const id = `cmp-${process.pid}-${serial++}`;
  const needsPod = c.plugin === 'bridge' || c.plugin === 'loopback';
  const pod = needsPod ? await createTestNetns('weft-cmp') : undefined;
  try {
    const stdin = stdinOf(c, e.dataDir);
    const out = await invoke(impl, c, 'ADD', stdin, id, pod?.path ?? '/var/run/netns/none');
    await invoke(impl, c, 'DEL', stdin, id, pod?.path ?? '');
    await invoke(impl, { plugin: c.plugin, name: 'base' }, 'DEL', stdinOf({ plugin: c.plugin, name: 'base' }, e.dataDir), id, pod?.path ?? '');
    return out;
  } finally {
    await pod?.destroy();
  }
}

describe('decoding: weft vs the reference plugins (success vs refusal)', rootOnly(), () => {
  before(async () => {
    for (const impl of Object.keys(IMPLS) as ImplName[]) {
      const node = await createTestNetns(`weft-cmp-${impl.slice(0, 3)}`);
      // kube-proxy's chain, which externalSetMarkChain names (the reference jumps to it).
      await node.exec(['iptables', '-t', 'nat', '-N', 'KUBE-MARK-MASQ']);
      envs.set(impl, { node, dataDir: mkdtempSync(join(tmpdir(), `weft-cmp-${impl}-`)) });
    }
  });
  after(async () => {
    for (const e of envs.values()) {
      await e.node.destroy();
      rmSync(e.dataDir, { recursive: true, force: true });
    }
  });

  test('every input: both succeed or both refuse; result format agrees', { timeout: 600_000 }, async (t) => {
    assert.ok(existsSync(join(IMPLS.weft, 'bridge')), 'npm run build first');
    assert.ok(existsSync(join(IMPLS.reference, 'bridge')), 'containernetworking-plugins must be installed');
    let agreements = 0;
    let formatAgreements = 0;
    let bothOk = 0;
    const disagreements: string[] = [];
    const expectedDivergences: string[] = [];
    for (const c of CASES) {
      const w = await addThenClean('weft', c);
      const r = await addThenClean('reference', c);
      const label = `${c.plugin}: ${c.name}`;
      const agree = w.ok === r.ok;
      if (agree) agreements++;
      if (c.divergence !== undefined) {
        expectedDivergences.push(`${label}: weft ${w.ok ? 'ok' : `refuses ${w.code}`}, reference ${r.ok ? 'ok' : `refuses ${r.code}`} (${c.divergence})`);
        continue;
      }
      if (!agree) disagreements.push(`${label}: weft ${w.ok ? 'ok' : `refuses ${w.code} ${w.text}`} | reference ${r.ok ? 'ok' : `refuses ${r.code} ${r.text}`}`);
      if (agree && w.ok && r.ok) {
        bothOk++;
        if (w.keys === r.keys && w.version === r.version) formatAgreements++;
        else disagreements.push(`${label}: result format weft {${w.keys}} ${String(w.version)} vs reference {${r.keys}} ${String(r.version)}`);
      }
    }
    const checked = CASES.length - expectedDivergences.length;
    t.diagnostic(`inputs ${CASES.length}; agreements ${agreements}; checked (no documented divergence) ${checked}; both succeeded ${bothOk}, same result format ${formatAgreements}`);
    for (const d of expectedDivergences) t.diagnostic(`documented divergence: ${d}`);
    for (const d of disagreements) t.diagnostic(`DISAGREE ${d}`);
    assert.deepEqual(disagreements, []);
    assert.ok(bothOk > 20, `enough inputs succeed on both sides to compare (got ${bothOk})`);
  });
});
