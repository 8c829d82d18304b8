// `weft doctor` on a node with a plain bridge network (no flannel plugin, no weftd): the weftd checks
// are skipped with the reason, a pod wired by the conflist reports clean; after its namespace is
// deleted without DEL its address file is named as leaked, and then its masquerade element.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CniRunner, type ConfList } from '../../../testkit/cni-runner.ts';
import { nsExec } from '../../../testkit/topology.ts';
import { WEFT, skipReason, type DoctorReport } from './helpers.ts';
import { runOk } from '../../../testkit/exec.ts';
import { inNetns, netnsFixture, type TestNetns } from '../../../testkit/netns.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const BIN = join(ROOT, 'dist', 'bin');
const TAG = `wfdb${process.pid.toString(16)}`;

void describe('weft doctor on a bridge-only node', { skip: skipReason(), timeout: 60_000 }, () => {
  const nets = netnsFixture(`${TAG}`);
  let node: string;
  let podNs: TestNetns;
  let dir: string;
  let runner: CniRunner;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), `${TAG}-`));
    node = (await nets.create()).name;
    podNs = await nets.create();
    await runOk(inNetns(node, ['ip', 'link', 'set', 'lo', 'up']));
    mkdirSync(join(dir, 'net.d'));
    const conf = JSON.parse(readFileSync(join(ROOT, 'conf', 'weft-bridge.conflist'), 'utf8')) as ConfList;
    const plugins = conf.plugins.filter((p) => p.type !== 'portmap').map((p) => (p.type === 'bridge' ? { ...p, ipam: { ...(p['ipam'] as object), dataDir: join(dir, 'ipam') } } : p));
    writeFileSync(join(dir, 'net.d', '10-weft.conflist'), JSON.stringify({ ...conf, plugins }));
    runner = new CniRunner({ ...conf, plugins }, { binDirs: [BIN], nodeNetns: node });
    await runner.add({ containerId: `${TAG}-c1`, netns: podNs.path, ifName: 'eth0' });
  });
  after(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function doctor(): Promise<DoctorReport> {
    const r = await nsExec(node, ['node', WEFT, 'doctor', '--json', '--subnet-file', join(dir, 'no-subnet.env'), '--cni-conf-dir', join(dir, 'net.d'),
      '--cni-bin-dir', BIN, '--ipam-data-dir', join(dir, 'ipam'), '--store', `file:${join(dir, 'leases')}`, '--net-conf', join(dir, 'none.json')]);
    const report = JSON.parse(r.stdout) as DoctorReport;
    assert.equal(r.code, report.ok ? 0 : 1);
    return report;
  }

  void it('skips the weftd checks with the reason and reports the pod clean', async () => {
    const r = await doctor();
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    const status = Object.fromEntries(r.checks.map((x) => [x.check, x.status]));
    assert.deepEqual({ lease: status['lease'], peers: status['peers'], cni: status['cni'], ipam: status['ipam'], nft: status['nft'] }, { lease: 'skipped', peers: 'skipped', cni: 'ok', ipam: 'ok', nft: 'ok' });
    assert.match(r.checks[0]?.skipped ?? '', /uses no flannel plugin/);
  });

  void it('names the address of a pod whose namespace was deleted without DEL', async () => {
    await podNs.destroy();
    const r = await doctor();
    assert.deepEqual(r.problems.map((p) => p.check), ['ipam'], JSON.stringify(r.problems));
    assert.match(r.problems[0]?.detail ?? '', new RegExp(`is held by ${TAG}-c1/eth0, which has no interface on this node`));
  });

  void it('names its masquerade element once the address file is gone too', async () => {
    const leaked = (await doctor()).problems[0]?.fix.match(/rm (\S+)$/)?.[1];
    assert.ok(leaked, 'the fix names the file');
    rmSync(leaked);
    const r = await doctor();
    assert.deepEqual(r.problems.map((p) => p.check), ['nft'], JSON.stringify(r.problems));
    assert.match(r.problems[0]?.detail ?? '', new RegExp(`bridge-pods4-[0-9a-f]+ has element [0-9.]+ for ${TAG}-c1/eth0`));
  });
});
