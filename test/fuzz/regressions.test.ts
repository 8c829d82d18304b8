// Fixed cases for bugs the fuzz suite found, run through the in-process worker inside a node
// namespace made by the test (never in the runner's own netns). Each entry names the fix it guards.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestNetns, rootOnly, type TestNetns } from '../../testkit/netns.ts';
import type { Expectation, FuzzCase } from './cases.ts';
import { judge } from './oracle.ts';
import { FUZZ_TARGETS, type FuzzContext } from './targets.ts';
import { FuzzWorker, ownNetnsId, privateBinDir } from './worker-client.ts';

interface Regression {
  what: string;
  plugin: string;
  env?: Record<string, string>;
  config?: (base: Record<string, unknown>) => Record<string, unknown>;
  expect: Expectation;
}

const err = (...codes: number[]): Expectation => ({ ok: false, codes });
const okOnly: Expectation = { ok: true, codes: [] };

describe('fuzz regressions', rootOnly(), () => {
  let node: TestNetns;
  let pod: TestNetns;
  let tmp: string;
  let worker: FuzzWorker;
  let sock: Server;

  before(async () => {
    node = await createTestNetns('weft-t-fzr');
    pod = await createTestNetns('weft-t-fzr');
    tmp = mkdtempSync(join(tmpdir(), 'weft-fuzzreg-'));
    mkdirSync(join(tmp, 'cwd'));
    sock = createServer();
    await new Promise<void>((resolve) => sock.listen(join(tmp, 'sock'), resolve));
    worker = await FuzzWorker.start(node.name, FUZZ_TARGETS.map((t) => t.name), join(tmp, 'cwd'));
  });

  after(async () => {
    await worker?.close();
    sock?.close();
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  });

  const cases = (): Regression[] => [
    // loopback mapped a CNI_NETNS that is missing or not a netns to 999; bridge says 3 (unknown container).
    { what: 'loopback ADD, netns path missing', plugin: 'loopback', env: { CNI_NETNS: '/nonexistent/netns' }, expect: err(3) },
    { what: 'loopback ADD, netns is a regular file', plugin: 'loopback', env: { CNI_NETNS: '/etc/hostname' }, expect: err(3) },
    { what: 'loopback ADD, netns is a uts namespace', plugin: 'loopback', env: { CNI_NETNS: '/proc/self/ns/uts' }, expect: err(3) },
    // open(2) of a UNIX socket fails with ENXIO, which openNetns passed on raw (999).
    { what: 'bridge ADD, netns is a UNIX socket', plugin: 'bridge', env: { CNI_NETNS: join(tmp, 'sock') }, expect: err(3) },
    { what: 'loopback ADD, netns is a UNIX socket', plugin: 'loopback', env: { CNI_NETNS: join(tmp, 'sock') }, expect: err(3) },
    // Names the kernel and validateIfName accept ('vlan-é') but our sysctl names refused: 999 after the
    // bridge existed. They now work end to end; a lone surrogate (a different name once encoded) is code 7.
    { what: 'bridge ADD, non-ASCII bridge name', plugin: 'bridge', config: (b) => ({ ...b, bridge: 'w\u00e9ft' }), expect: okOnly },
    { what: 'bridge ADD, lone surrogate in bridge name', plugin: 'bridge', config: (b) => ({ ...b, bridge: 'ab\ud800cd' }), expect: err(7) },
    { what: 'bridge ADD, non-ASCII CNI_IFNAME', plugin: 'bridge', env: { CNI_IFNAME: 'eth\u00e90' }, expect: okOnly },
    { what: 'bridge ADD, CNI_IFNAME with @', plugin: 'bridge', env: { CNI_IFNAME: 'e@th' }, expect: okOnly },
    // '%' is a name template for the kernel (EINVAL for "e%h"): refused up front, not 999 after the veth.
    { what: 'bridge ADD, CNI_IFNAME with %', plugin: 'bridge', env: { CNI_IFNAME: 'e%h' }, expect: err(4) },
    { what: 'bridge ADD, bridge name eth%d', plugin: 'bridge', config: (b) => ({ ...b, bridge: 'br%d' }), expect: err(7) },
  ];

  void test('the in-process worker refuses to run in the test runner\'s own network namespace', () => {
    // Started WITHOUT `ip netns exec`: it shares our namespace and must exit before loading any plugin.
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'worker.ts')], {
      cwd: join(import.meta.dirname, '..', '..'), env: { PATH: process.env['PATH'], WEFT_FUZZ_RUNNER_NETNS: ownNetnsId() }, input: '', encoding: 'utf8', timeout: 30_000,
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /refusing/);
    assert.equal(r.stdout, '');
  });

  void test('each case answers with its fitting code', async () => {
    const problems: string[] = [];
    let n = 0;
    for (const r of cases()) {
      const t = FUZZ_TARGETS.find((x) => x.name === r.plugin);
      if (t === undefined) throw new Error(`no target ${r.plugin}`);
      const ctx: FuzzContext = { dataDir: join(tmp, 'ipam'), podNetns: pod.path, octet: 150, scratch: join(tmp, 'cwd') };
      const base = t.baseConfig(ctx);
      const c: FuzzCase = {
        id: `reg${n++}`, target: t.name, label: r.what, expect: r.expect,
        env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: `reg${n}`, CNI_NETNS: pod.path, CNI_IFNAME: 'eth0', CNI_PATH: privateBinDir(), CNI_ARGS: '', ...r.env },
        stdin: Buffer.from(JSON.stringify(r.config ? r.config(base) : base)),
      };
      const out = await worker.run(c);
      const v = judge(c, out);
      if (v.problem !== undefined) problems.push(`${r.what}: ${v.problem}`);
      if (v.ok) {
        const d = await worker.run({ ...c, env: { ...c.env, CNI_COMMAND: 'DEL' } });
        if (d.exitCode !== 0) problems.push(`${r.what}: DEL failed: ${d.stdout}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
