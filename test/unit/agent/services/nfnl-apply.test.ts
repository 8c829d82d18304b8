import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { batchBytes, elemChangeCommands } from '../../../../lib/netfilter/nfnl/elem-changes.ts';
import { MAX_BATCH_BYTES, elemOpBatches, elemOpCommands, encodeElemOp } from '../../../../agent/services/nfnl-apply.ts';

const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

void describe('services netlink elements', () => {
  it('endpoint slots: address . port (or nodePort) . slot, the slot 32 bits in host order (what numgen writes); address . port data padded per part', () => {
    const c = encodeElemOp({ verb: 'add', map: 'epn4t', key: '30080 . 1', value: '10.1.2.3 . 8080', family: 4 });
    assert.deepEqual([...c.elem.key], [0x75, 0x80, 0, 0, ...(LE ? [1, 0, 0, 0] : [0, 0, 0, 1])]);
    assert.deepEqual([...(c.elem.data as Uint8Array)], [10, 1, 2, 3, 0x1f, 0x90, 0, 0]);
    const l = encodeElemOp({ verb: 'add', map: 'epl4u', key: '192.0.2.7 . 53 . 0', value: '10.1.2.3 . 53', family: 4 });
    assert.deepEqual([...l.elem.key], [192, 0, 2, 7, 0, 53, 0, 0, 0, 0, 0, 0]);
    const v6 = encodeElemOp({ verb: 'add', map: 'epnl6u', key: '30053 . 0', value: 'fd00::1 . 53', family: 6 });
    assert.equal((v6.elem.data as Uint8Array).length, 20);
    assert.equal(encodeElemOp({ verb: 'delete', map: 'ep6t', key: 'fd00::96 . 80 . 3', value: '', family: 6 }).elem.data, undefined);
    assert.equal(encodeElemOp({ verb: 'delete', map: 'aff4', key: '10.244.7.7 . 10.96.0.8 . tcp . 80', value: '', family: 4 }).elem.key.length, 16);
  });

  it('fixed maps: verdicts and set keys', () => {
    const g = encodeElemOp({ verb: 'add', map: 'svc4', key: '10.96.0.1 . tcp . 80', value: 'goto svc-0123456789abcdef' });
    assert.deepEqual(g.elem.data, { verdict: 'goto', chain: 'svc-0123456789abcdef' });
    assert.deepEqual([...g.elem.key], [10, 96, 0, 1, 6, 0, 0, 0, 0, 80, 0, 0]);
    assert.deepEqual(encodeElemOp({ verb: 'add', map: 'noepnp4', key: 'udp . 30001', value: 'drop' }).elem.data, { verdict: 'drop' });
    assert.equal(encodeElemOp({ verb: 'add', map: 'hairpin4', key: '10.0.0.1 . 10.0.0.1', value: '' }).elem.data, undefined);
    assert.throws(() => encodeElemOp({ verb: 'add', map: 'svc4', key: '10.96.0.1 . tcp', value: 'drop' }), /part/);
    assert.throws(() => encodeElemOp({ verb: 'add', map: 'nosuch-1', key: '1', value: '' }), /no netlink encoding/);
  });

  it('runs of one verb and map share a message; too large a batch is left to nft', () => {
    const ops = [
      ...Array.from({ length: 3 }, (_, i) => ({ verb: 'delete' as const, map: 'ep4t', key: `10.96.0.1 . 80 . ${i}`, value: '', family: 4 as const })),
      ...Array.from({ length: 3 }, (_, i) => ({ verb: 'add' as const, map: 'ep4t', key: `10.96.0.1 . 80 . ${i}`, value: `10.0.0.${i} . 80`, family: 4 as const })),
      { verb: 'add' as const, map: 'hairpin4', key: '10.0.0.1 . 10.0.0.1', value: '' },
    ];
    assert.equal(elemOpCommands(ops)?.length, 3);
    const huge = Array.from({ length: 20_000 }, (_, i) => ({ verb: 'add' as const, map: 'ep4t', key: `10.96.0.1 . 80 . ${i}`, value: `10.0.${i >> 8}.${i & 255} . 80`, family: 4 as const }));
    assert.equal(elemOpCommands(huge), undefined);
  });

  it('a cold start\'s elements go in order as batches each under the byte limit', () => {
    const ops = Array.from({ length: 20_000 }, (_, i) => ({ verb: 'add' as const, map: 'ep4t', key: `10.96.0.1 . 80 . ${i}`, value: `10.0.${i >> 8}.${i & 255} . 80`, family: 4 as const }));
    const batches = [...elemOpBatches(ops)];
    assert.ok(batches.length > 1);
    for (const b of batches) assert.ok(batchBytes(b) <= MAX_BATCH_BYTES, String(batchBytes(b)));
    // Every element once: the batches' payload is the one huge batch's, but for the message headers of the extra splits (one per batch at most).
    const bytes = (cs: ReadonlyArray<{ payload: Uint8Array }>) => cs.reduce((n, c) => n + c.payload.length, 0);
    const whole = bytes(elemChangeCommands({ family: 'inet', name: 'weft-svc' }, ops.map(encodeElemOp)));
    assert.ok(Math.abs(bytes(batches.flat()) - whole) <= batches.length * 40, `${bytes(batches.flat())} vs ${whole}`);
    const small = [...elemOpBatches(ops.slice(0, 5))];
    assert.equal(small.length, 1);
    assert.deepEqual(small[0], elemOpCommands(ops.slice(0, 5)));
    assert.equal([...elemOpBatches([])].length, 0);
  });
});
