// Issue 27 item 3: every flag weftd and flanneld accept has a bad value in flag-cases.ts, and each
// 'flags' case is refused by weftd's flag parsing (what runs before anything is opened), naming the
// flag. The built binary and the stores are the namespace table's (test/ns/agent/weftd-flags.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeWeftdFlags, weftdCommand, type RawFlags } from '../../../agent/flags.ts';
import { FLANNELD_FLAGS, FLANNELD_REFUSED, flanneldArgv } from '../../../agent/flanneld-argv.ts';
import { FLAG_CASES, NO_VALUE_FLAGS, baseWithout, type FlagCase, type StoreKind } from './flag-cases.ts';

/** A working command line per store (paths need not exist: the flag checks read no file). */
export const BASE: Record<StoreKind, { args: string[]; env: Record<string, string> }> = {
  file: { args: ['--net-conf', '/t/net-conf.json', '--store', 'file:/t/leases', '--iface', 'eth0', '--subnet-file', '/t/subnet.env'], env: {} },
  etcd: { args: ['--net-conf', '/t/net-conf.json', '--etcd-endpoints', 'http://192.0.2.2:2379', '--iface', 'eth0', '--subnet-file', '/t/subnet.env'], env: {} },
  kube: { args: ['--kube-subnet-mgr', '--kubeconfig-file', '/t/kubeconfig', '--net-conf', '/t/net-conf.json', '--iface', 'eth0', '--subnet-file', '/t/subnet.env'], env: { NODE_NAME: 'n1' } },
};

function run(c: FlagCase, store: StoreKind): void {
  const env: Record<string, string> = { ...BASE[store].env };
  for (const [k, v] of Object.entries(c.env ?? {})) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  const args = [...baseWithout(BASE[store].args, c.without), ...c.args].map((a) => a.replace('$DIR', '/t').replace('$FILE', '/t/file'));
  const cmd = weftdCommand('0').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  cmd.parse(flanneldArgv(args, env), { from: 'user' });
  normalizeWeftdFlags(cmd.opts<RawFlags>(), env);
}

void describe('weftd flags: one bad value per flag', () => {
  void it('covers every flag of weftd and of flanneld', () => {
    const weftd = weftdCommand('0').options.map((o) => (o.long ?? '').replace(/^--/, ''));
    const all = new Set([...weftd, ...Object.keys(FLANNELD_FLAGS), ...Object.keys(FLANNELD_REFUSED)]);
    const covered = new Set(FLAG_CASES.map((c) => c.flag));
    const missing = [...all].filter((f) => !covered.has(f) && !NO_VALUE_FLAGS.includes(f));
    assert.deepEqual(missing, []);
    assert.ok(all.size > 40, `only ${all.size} flags found`);
  });

  for (const c of FLAG_CASES.filter((x) => x.stage === 'flags')) {
    const store = c.stores?.[0] ?? 'file';
    void it(`${c.args.join(' ') || JSON.stringify(c.env)} (${store} store)`, () => {
      assert.throws(() => run(c, store), c.error);
    });
  }

  void it('the working command lines themselves pass', () => {
    for (const store of ['file', 'etcd', 'kube'] as const) assert.doesNotThrow(() => run({ flag: '', args: [], error: /x/, stage: 'flags' }, store));
  });
});
