// EtcdLeaseStore against an in-memory EtcdApi whose list can be held back: a watch event that
// arrives while a list is in flight must not be undone by that (older) list, and a list whose
// revision is below what was seen before it was asked for is etcd's data loss, not lag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EtcdApi, EtcdKeyValue, EtcdWatchHandlers } from '../../../../../agent/lease/etcd/api.ts';
import { EtcdLeaseStore } from '../../../../../agent/lease/etcd/store.ts';
import { normalizeNetConf } from '../../../../../agent/config/net-conf.ts';

const PREFIX = '/race';
const SUBNETS = `${PREFIX}/subnets/`;

function leaseValue(ip: string): Buffer {
  return Buffer.from(JSON.stringify({ PublicIP: ip, BackendType: 'vxlan', BackendData: { VNI: 1, VtepMAC: '0a:58:0a:f4:4d:00' } }));
}

/** etcd in memory: one revision counter, puts and deletes delivered to the watch, lists that can be paused. */
class FakeEtcd implements EtcdApi {
  rev = 1;
  kv = new Map<string, EtcdKeyValue>();
  handlers: EtcdWatchHandlers | undefined;
  /** When set, a list takes its snapshot now but answers only when the gate opens. */
  gate: Promise<void> | undefined;
  lists = 0;

  put(key: string, value: Buffer): void {
    this.rev++;
    const kv = { key, value, createRevision: String(this.rev), modRevision: String(this.rev), lease: '0' };
    this.kv.set(key, kv);
    this.handlers?.onEvent('put', kv);
  }

  remove(key: string): void {
    const old = this.kv.get(key);
    if (!old) return;
    this.rev++;
    this.kv.delete(key);
    this.handlers?.onEvent('delete', { ...old, value: Buffer.alloc(0), modRevision: String(this.rev) });
  }

  get(key: string): Promise<{ kv: EtcdKeyValue | undefined; revision: number }> {
    return Promise.resolve({ kv: this.kv.get(key), revision: this.rev });
  }

  async list(prefix: string): Promise<{ kvs: EtcdKeyValue[]; revision: number }> {
    this.lists++;
    const snap = { kvs: [...this.kv.values()].filter((k) => k.key.startsWith(prefix)), revision: this.rev };
    const gate = this.gate;
    if (gate) await gate;
    return snap;
  }

  delete(key: string): Promise<void> { this.remove(key); return Promise.resolve(); }
  putIf(): Promise<{ succeeded: boolean; revision: number }> { return Promise.reject(new Error('not used')); }
  deleteIf(): Promise<boolean> { return Promise.resolve(false); }
  leaseGrant(): Promise<{ id: string; ttl: number }> { return Promise.resolve({ id: '1', ttl: 60 }); }
  leaseKeepAlive(): Promise<number> { return Promise.resolve(60); }
  leaseRevoke(): Promise<void> { return Promise.resolve(); }
  watch(_prefix: string, _from: number, h: EtcdWatchHandlers): { cancel(): void } {
    this.handlers = h;
    return { cancel: () => { if (this.handlers === h) this.handlers = undefined; } };
  }
  close(): void { this.handlers = undefined; }
}

function openStore(etcd: FakeEtcd): EtcdLeaseStore {
  return new EtcdLeaseStore(etcd, normalizeNetConf({ Network: '10.244.0.0/16', Backend: { Type: 'vxlan' } }), { endpoints: [], prefix: PREFIX, resyncMs: 3_600_000 });
}

void test('a list answered after a newer watch event does not drop that event\'s lease', async () => {
  const etcd = new FakeEtcd();
  etcd.put(`${SUBNETS}10.244.1.0-24`, leaseValue('192.168.1.1'));
  const store = openStore(etcd);
  try {
    const first = await store.list();
    store.watch(first.revision, () => undefined);
    await new Promise((r) => setImmediate(r));
    assert.ok(etcd.handlers, 'the store watches');
    // A re-list (as after a reconnect) takes its snapshot, then a put arrives through the watch
    // before that list's answer does.
    let open!: () => void;
    etcd.gate = new Promise((r) => { open = r; });
    const relist = store.list();
    await new Promise((r) => setImmediate(r));
    etcd.gate = undefined;
    etcd.put(`${SUBNETS}10.244.77.0-24`, leaseValue('192.168.1.3'));
    open();
    const after = await relist;
    assert.deepEqual(after.leases.map((l) => l.subnet).sort(), ['10.244.1.0/24', '10.244.77.0/24']);
    assert.ok(etcd.lists >= 3, `the lagging list was asked again (${etcd.lists} lists)`);
  } finally {
    await store.close();
  }
});

void test('a list below the revision seen before it was asked for is data loss: the table follows it', async () => {
  const etcd = new FakeEtcd();
  etcd.put(`${SUBNETS}10.244.1.0-24`, leaseValue('192.168.1.1'));
  etcd.put(`${SUBNETS}10.244.2.0-24`, leaseValue('192.168.1.2'));
  const store = openStore(etcd);
  try {
    store.watch((await store.list()).revision, () => undefined);
    // etcd restarted empty: revisions start again from 1.
    etcd.kv.clear();
    etcd.rev = 1;
    etcd.put(`${SUBNETS}10.244.9.0-24`, leaseValue('192.168.1.9'));
    const after = await store.list();
    assert.deepEqual(after.leases.map((l) => l.subnet), ['10.244.9.0/24']);
  } finally {
    await store.close();
  }
});
