// `weft doctor` through the CLI entry point: a bad flag exits 2 naming it, and --help lists the flags.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runWeftCli } from '../../../../cli/program.ts';

function capture(): { out: string[]; err: string[]; io: { out: (s: string) => void; err: (s: string) => void } } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s) => out.push(s), err: (s) => err.push(s) } };
}

test('a bad flag exits 2 and names the flag', async () => {
  const c = capture();
  assert.equal(await runWeftCli(['doctor', '--store', 'etcd:x'], c.io), 2);
  assert.match(c.err.join(''), /--store "etcd:x" must be file:\/absolute\/dir/);
});

test('--help lists the lease-source, path and metrics flags', async () => {
  const c = capture();
  assert.equal(await runWeftCli(['doctor', '--help'], c.io), 0);
  for (const flag of ['--subnet-file', '--store', '--etcd-endpoints', '--net-conf', '--iface', '--cni-conf-dir', '--cni-bin-dir', '--ipam-data-dir', '--metrics-addr', '--json']) {
    assert.ok(c.out.join('').includes(flag), flag);
  }
});
