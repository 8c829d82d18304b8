// The host-local plugin object run in-process through the skeleton, on a memory store (no files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runPlugin } from '../../../../lib/cni/skel.ts';
import { makeHostLocalPlugin } from '../../../../ipam/host-local/plugin.ts';
import { MemoryStore } from '../../../../ipam/host-local/memory-store.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function setup() {
  const store = new MemoryStore();
  const plugin = makeHostLocalPlugin(() => store);
  const invoke = async (command: string, containerId: string, config: Record<string, unknown>) => {
    const env = { CNI_COMMAND: command, CNI_CONTAINERID: containerId, CNI_NETNS: '/nonexistent', CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni' };
    const out = await runPlugin(plugin, { env, stdin: Buffer.from(JSON.stringify(config)) });
    return { ...out, json: out.stdout ? (JSON.parse(out.stdout) as Record<string, unknown>) : null };
  };
  return { store, invoke };
}

const conf = (cniVersion: string, extra: Record<string, unknown> = {}) => ({
  cniVersion,
  name: 'unit',
  type: 'bridge',
  ...extra,
  ipam: { type: 'host-local', dataDir: '/', ranges: [[{ subnet: '10.3.0.0/24' }], [{ subnet: 'fd00:3::/64' }]], routes: [{ dst: '0.0.0.0/0' }] },
});

void test('ADD result in 0.3.1 form carries version fields; 1.1.0 does not', async () => {
  const { invoke } = setup();
  const old = await invoke('ADD', 'a', conf('0.3.1'));
  assert.equal(old.exitCode, 0, old.stdout);
  assert.deepEqual(old.json, {
    cniVersion: '0.3.1',
    ips: [
      { version: '4', address: '10.3.0.2/24', gateway: '10.3.0.1' },
      { version: '6', address: 'fd00:3::2/64', gateway: 'fd00:3::1' },
    ],
    routes: [{ dst: '0.0.0.0/0' }],
    dns: {},
  });
  const cur = await invoke('ADD', 'b', conf('1.1.0'));
  assert.deepEqual(cur.json?.['ips'], [
    { address: '10.3.0.3/24', gateway: '10.3.0.1' },
    { address: 'fd00:3::3/64', gateway: 'fd00:3::1' },
  ]);
});

void test('GC through the skeleton keeps only valid attachments; STATUS is ready', async () => {
  const { store, invoke } = setup();
  for (const id of ['a', 'b', 'c']) assert.equal((await invoke('ADD', id, conf('1.1.0'))).exitCode, 0);
  const gc = await invoke('GC', '', conf('1.1.0', { 'cni.dev/valid-attachments': [{ containerID: 'b', ifname: 'eth0' }] }));
  assert.equal(gc.exitCode, 0, gc.stdout);
  assert.deepEqual([...new Set([...store.snapshot().values()].map((h) => h.containerId))], ['b']);
  assert.equal((await invoke('STATUS', '', conf('1.1.0'))).exitCode, 0);
  const del = await invoke('DEL', 'b', conf('1.1.0'));
  assert.equal(del.exitCode, 0, del.stdout);
  assert.equal(store.snapshot().size, 0);
});

void test('in-process delegation: ADD reuses the validation of the same decoded config, not another CNI_ARGS', async () => {
  const { validateAdd } = await import('../../../../ipam/host-local/commands.ts');
  const dir = mkdtempSync(join(tmpdir(), 'weft-unit-hl-val-'));
  try {
    const resolv = join(dir, 'resolv.conf');
    writeFileSync(resolv, 'nameserver 10.0.0.53\n');
    const config = { cniVersion: '1.0.0', name: 'unit', type: 'bridge', ipam: { type: 'host-local', subnet: '10.3.0.0/24', resolvConf: resolv } };
    const a = (args: string) => ({ command: 'ADD' as const, containerId: 'c', netns: '', ifName: 'eth0', args, path: [], stdinData: Buffer.alloc(0), config, cniVersion: '1.0.0', env: {} });
    const first = validateAdd(a(''));
    writeFileSync(resolv, 'nameserver 10.0.0.54\n');
    assert.equal(validateAdd(a('')), first, 'same config object and CNI_ARGS: the first outcome');
    assert.deepEqual(first.dns, { nameservers: ['10.0.0.53'] });
    const other = validateAdd(a('IP=10.3.0.9'));
    assert.notEqual(other, first);
    assert.deepEqual(other.conf.requestedIps.map((x) => x.value), [0x0a030009n]);
    assert.deepEqual(other.dns, { nameservers: ['10.0.0.54'] }, 'another CNI_ARGS validates afresh');
    // A failed validation is not remembered: the same object fails again.
    const bad = { ...config, ipam: { ...config.ipam, subnet: 'nonsense' } };
    for (let i = 0; i < 2; i++) assert.throws(() => validateAdd({ ...a(''), config: bad }), /subnet/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
