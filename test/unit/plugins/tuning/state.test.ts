import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { mergeState, withMac } from '../../../../plugins/tuning/add.ts';
import { staleFiles } from '../../../../plugins/tuning/gc.ts';
import { captureState, findTuningProblems } from '../../../../plugins/tuning/link-state.ts';
import { listStates, parseState, readState, removeState, statePath, writeState } from '../../../../plugins/tuning/state.ts';
import type { TuningConfig } from '../../../../plugins/tuning/config.ts';

const cfg = (over: Partial<TuningConfig>): TuningConfig => ({ name: 'tn', sysctls: [], promisc: false, mtu: 0, dataDir: '/x', validAttachments: null, ...over });
const link = { mac: '02:00:00:00:00:01', mtu: 1500, promisc: false, allmulti: false, txQLen: 1000 };

describe('tuning state and result', () => {
  it('state file names are the reference layout and cannot leave the directory', () => {
    assert.equal(statePath('/run/cni/tuning', 'abc', 'eth0'), '/run/cni/tuning/abc_eth0.json');
    for (const [id, ifn] of [['../x', 'eth0'], ['abc', '..'], ['abc', 'a/b'], ['.hidden', 'eth0']] as const) assert.throws(() => statePath('/d', id, ifn));
  });

  it('writes, reads, lists and removes a state file (mode 0600)', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'weft-tuning-unit-')), 'sub');
    try {
      const p = statePath(dir, 'c1', 'eth0');
      writeState(p, dir, { network: 'tn', mtu: 1500 });
      assert.equal(statSync(p).mode & 0o777, 0o600);
      assert.deepEqual(readState(p), { network: 'tn', mtu: 1500 });
      assert.deepEqual(listStates(dir), [{ file: 'c1_eth0.json', state: { network: 'tn', mtu: 1500 } }]);
      removeState(p);
      removeState(p);
      assert.deepEqual(readdirSync(dir), []);
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true });
    }
  });

  it('parseState refuses non-objects', () => {
    assert.equal(parseState('[1]'), null);
    assert.equal(parseState('nope'), null);
    assert.deepEqual(parseState('{"mac":"02:00:00:00:00:01"}'), { mac: '02:00:00:00:00:01' });
  });

  it('saves only what the config changes', () => {
    assert.deepEqual(captureState(cfg({ mtu: 1400, allmulti: true }), link), { network: 'tn', mtu: 1500, allmulti: false });
    assert.deepEqual(captureState(cfg({ mac: '02:00:00:00:00:09', promisc: true, txQLen: 5 }), link), { network: 'tn', mac: '02:00:00:00:00:01', promisc: false, txQLen: 1000 });
  });

  it('a sysctl-only config saves no link value', () => {
    assert.deepEqual(captureState(cfg({}), null), { network: 'tn' });
  });

  it('a repeated ADD keeps the first originals', () => {
    assert.deepEqual(mergeState({ network: 'tn', mtu: 1500, sysctl: { a: '0' } }, { network: 'tn', mtu: 1400, mac: 'm', sysctl: { a: '1', b: '2' } }), { network: 'tn', mtu: 1500, mac: 'm', sysctl: { a: '0', b: '2' } });
  });

  it('CHECK compares as the reference (promisc both ways)', () => {
    assert.deepEqual(findTuningProblems(cfg({}), link), []);
    assert.deepEqual(findTuningProblems(cfg({}), { ...link, promisc: true }), ['promisc is true, configured false']);
    assert.deepEqual(findTuningProblems(cfg({ mtu: 1400, mac: '02:00:00:00:00:09' }), link), ['mac is 02:00:00:00:00:01, configured 02:00:00:00:00:09', 'mtu is 1500, configured 1400']);
  });

  it('the result gets the new MAC on the interface named CNI_IFNAME only', () => {
    const prev = { cniVersion: '1.0.0', interfaces: [{ name: 'cni0', mac: 'a' }, { name: 'eth0', mac: 'b', sandbox: '/x' }] };
    assert.deepEqual(withMac(prev as never, 'eth0', 'c').interfaces?.map((i) => i.mac), ['a', 'c']);
    assert.equal(withMac(prev as never, 'eth0', undefined), prev);
  });

  it('GC drops only this network\'s files of attachments not listed', () => {
    const listed = [{ file: 'a_eth0.json', state: { network: 'tn' } }, { file: 'b_eth0.json', state: { network: 'tn' } }, { file: 'c_eth0.json', state: { network: 'other' } }, { file: 'd_eth0.json', state: null }];
    assert.deepEqual(staleFiles(listed, 'tn', [{ containerId: 'a', ifName: 'eth0' }]), ['b_eth0.json']);
  });
});
