// End-to-end: the kube-flannel conflist's plugin (dist/bin/flannel -> bridge -> host-local) is one
// process per pod when CNI_PATH holds our bundles, and a foreign `bridge` found first on CNI_PATH is
// the one that runs. Every Node.js start is counted by a preload (NODE_OPTIONS, which a delegate
// inherits with the rest of the environment) that appends its pid to a file; a foreign bridge is a
// shell wrapper around the reference one that records its own runs.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { execPlugin } from '../../../testkit/cni-runner.ts';
import { createTestNetns, ipJson, rootOnly, type TestNetns } from '../../../testkit/netns.ts';
import { DIST } from '../../../scripts/bench/util.ts';

const REFERENCE_BRIDGE = '/usr/lib/cni/bridge';

interface Fixture {
  node: TestNetns;
  pod: TestNetns;
  dir: string;
  starts: string;
  preload: string;
  conf: string;
}

/** Two namespaces (node, pod) and a temp dir, each removed after the test even when it fails. */
async function fixture(t: TestContext): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-t-flannel-1p-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const node = await createTestNetns('weft-t-f1n');
  t.after(() => node.destroy());
  const pod = await createTestNetns('weft-t-f1p');
  t.after(() => pod.destroy());
  const subnetFile = join(dir, 'subnet.env');
  writeFileSync(subnetFile, 'FLANNEL_NETWORK=10.251.0.0/16\nFLANNEL_SUBNET=10.251.7.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n');
  const starts = join(dir, 'node-starts');
  const preload = join(dir, 'count.cjs');
  writeFileSync(preload, `require('node:fs').appendFileSync(${JSON.stringify(starts)}, process.pid + ' ' + (process.argv[1] || '') + '\\n');\n`);
  // What kube-flannel's conflist gives the flannel plugin, with per-test paths.
  const conf = JSON.stringify({
    cniVersion: '1.0.0', name: 'cbr0', type: 'flannel', subnetFile, dataDir: join(dir, 'flannel'),
    delegate: { hairpinMode: true, isDefaultGateway: true }, ipam: { dataDir: join(dir, 'ipam') },
  });
  return { node, pod, dir, starts, preload, conf };
}

/** The Node.js processes started since the last call (their pid and script), and resets the count. */
function takeStarts(f: Fixture): string[] {
  let text = '';
  try {
    text = readFileSync(f.starts, 'utf8');
  } catch {
    // no Node.js process started
  }
  rmSync(f.starts, { force: true });
  return text.split('\n').filter((l) => l !== '');
}

async function flannel(f: Fixture, command: string, id: string, cniPath: string): Promise<Record<string, unknown> | undefined> {
  const env = { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: f.pod.path, CNI_IFNAME: 'eth0', CNI_PATH: cniPath, NODE_OPTIONS: `--require ${f.preload}` };
  const r = await execPlugin(join(DIST, 'flannel'), env, f.conf, { binDirs: cniPath.split(':'), nodeNetns: f.node.name });
  assert.equal(r.code, 0, `flannel ${command}: ${r.stdout}${r.stderr}`);
  return r.json;
}

test('flannel ADD and DEL with our bridge and host-local on CNI_PATH start one Node.js process each', rootOnly(), async (t) => {
  const f = await fixture(t);
  const add = await flannel(f, 'ADD', 'one-1', DIST);
  const ips = (add?.['ips'] as Array<{ address: string }> | undefined)?.map((i) => i.address);
  assert.deepEqual(ips, ['10.251.7.2/24'], JSON.stringify(add));
  const addStarts = takeStarts(f);
  assert.equal(addStarts.length, 1, `ADD started ${addStarts.length} Node.js processes: ${addStarts.join('; ')}`);
  await flannel(f, 'DEL', 'one-1', DIST);
  const delStarts = takeStarts(f);
  assert.equal(delStarts.length, 1, `DEL started ${delStarts.length} Node.js processes: ${delStarts.join('; ')}`);
  // DEL replayed the stored config through the in-process bridge: the pod's interface is gone.
  const links = await ipJson(f.pod, ['link', 'show']);
  assert.ok(!JSON.stringify(links).includes('"eth0"'), JSON.stringify(links));
});

test('a foreign bridge first on CNI_PATH is exec\'d by flannel ADD and by the DEL replay', rootOnly(), async (t) => {
  const f = await fixture(t);
  const foreign = join(f.dir, 'foreign');
  mkdirSync(foreign);
  const ran = join(f.dir, 'foreign-runs');
  writeFileSync(join(foreign, 'bridge'), `#!/bin/sh\necho "$CNI_COMMAND" >> ${ran}\nexec ${REFERENCE_BRIDGE}\n`, { mode: 0o755 });
  const cniPath = `${foreign}:${DIST}`;
  const add = await flannel(f, 'ADD', 'foreign-1', cniPath);
  assert.deepEqual((add?.['ips'] as Array<{ address: string }> | undefined)?.map((i) => i.address), ['10.251.7.2/24'], JSON.stringify(add));
  await flannel(f, 'DEL', 'foreign-1', cniPath);
  assert.deepEqual(readFileSync(ran, 'utf8').split('\n').filter((l) => l !== ''), ['ADD', 'DEL']);
  // The reference bridge execs host-local from CNI_PATH (ours, a second Node.js start): flannel is the other.
  const starts = takeStarts(f);
  assert.equal(starts.length, 4, starts.join('; '));
  assert.equal(starts.filter((s) => s.endsWith('/host-local')).length, 2, starts.join('; '));
});
