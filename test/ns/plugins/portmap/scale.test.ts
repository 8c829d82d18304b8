// Scale: 20 pods x 5 mappings leave the rule count where 1 pod left it; add/remove time per pod printed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { listTable, WEFT_TABLE } from '../../../../lib/netfilter/index.ts';
import type { NftTableState } from '../../../../lib/netfilter/index.ts';
import { openNetns, withNetns } from '../../../../lib/netns/index.ts';
import { cmdAdd } from '../../../../plugins/portmap/add.ts';
import { cmdDel } from '../../../../plugins/portmap/del.ts';
import { ELEMENT_SETS } from '../../../../plugins/portmap/names.ts';
import { parseResult } from '../../../../lib/cni/result-parse.ts';
import { createTestNetns, rootOnly, run, type TestNetns } from '../../../../testkit/netns.ts';
import { cmdArgs, ensureValidators } from './fixture.ts';

const PODS = 20;
const MAPPINGS = 5;

function ruleCount(t: NftTableState | null): number {
  return [...(t?.chains.values() ?? [])].reduce((n, c) => n + c.rules.length, 0);
}
function elementCount(t: NftTableState | null): number {
  return ELEMENT_SETS.reduce((n, s) => n + (t?.sets.get(s)?.elements.length ?? 0), 0);
}

function pod(i: number) {
  const ns = { name: `pod-${i}`, path: `/var/run/netns/pod-${i}` } as TestNetns;
  const result = parseResult({
    cniVersion: '1.0.0',
    interfaces: [{ name: 'br0' }, { name: 'eth0', sandbox: ns.path }],
    ips: [{ address: `10.98.0.${10 + i}/24`, interface: 1 }, { address: `fd00:98::${(10 + i).toString(16)}/64`, interface: 1 }],
  });
  const portMappings = Array.from({ length: MAPPINGS }, (_, m) => ({ hostPort: 20000 + i * 10 + m, containerPort: 8000 + m, protocol: m % 2 === 0 ? 'tcp' : 'udp' }));
  return { ns, containerId: `scale-${i}`, result, portMappings };
}

describe('portmap at scale', rootOnly(), () => {
  let node: TestNetns;
  const inNode = <T>(fn: () => T): T => {
    const h = openNetns(node.path);
    try {
      return withNetns(h, fn);
    } finally {
      h.close();
    }
  };
  const table = () => listTable(WEFT_TABLE, { netnsPath: node.path });

  before(async () => {
    ensureValidators();
    node = await createTestNetns('weft-t-pms');
    // A pod subnet route, so the 127.0.0.1 step finds its interface (route_localnet).
    for (const cmd of [['link', 'add', 'br0', 'type', 'bridge'], ['addr', 'add', '10.98.0.1/24', 'dev', 'br0'], ['link', 'set', 'br0', 'up']]) {
      const r = await run(['ip', '-n', node.name, ...cmd]);
      assert.equal(r.code, 0, r.stderr);
    }
  });
  after(async () => {
    await node.destroy();
  });

  it(`${PODS} pods x ${MAPPINGS} mappings: same rules as 1 pod, one element set grows instead`, (t) => {
    const pods = Array.from({ length: PODS }, (_, i) => pod(i));
    const addMs: number[] = [];
    let rulesWithOne = -1;
    for (const [i, p] of pods.entries()) {
      const t0 = performance.now();
      inNode(() => cmdAdd(cmdArgs('ADD', p, { portMappings: p.portMappings, prevResult: p.result })));
      addMs.push(performance.now() - t0);
      if (i === 0) rulesWithOne = ruleCount(table());
    }
    const full = table();
    assert.equal(rulesWithOne, 10);
    assert.equal(ruleCount(full), rulesWithOne, 'the rule count does not grow with pods or mappings');
    // per mapping: DNAT v4 + v6, hairpin v4 + v6, localhost v4
    assert.equal(elementCount(full), PODS * MAPPINGS * 5);

    const delMs: number[] = [];
    for (const p of pods) {
      const t0 = performance.now();
      inNode(() => cmdDel(cmdArgs('DEL', p, { netns: '' })));
      delMs.push(performance.now() - t0);
    }
    const empty = table();
    assert.equal(elementCount(empty), 0);
    assert.equal(ruleCount(empty), rulesWithOne);
    const avg = (xs: number[]) => (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1);
    const msg = `in-process per pod (${MAPPINGS} mappings): ADD avg ${avg(addMs)} ms (first ${addMs[0]?.toFixed(1)}, last ${addMs.at(-1)?.toFixed(1)}), DEL avg ${avg(delMs)} ms (first ${delMs[0]?.toFixed(1)}, last ${delMs.at(-1)?.toFixed(1)}); rules ${rulesWithOne} with 1 pod and with ${PODS}`;
    t.diagnostic(msg);
    process.stderr.write(`${msg}\n`);
  });
});
