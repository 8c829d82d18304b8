import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vtepName } from '../../../../lib/flannel/devices.ts';
import { readVtepSpec, vtepMac, vtepSpecPath, writeVtepSpec, type VtepSpec } from '../../../../lib/flannel/vtep.ts';

void describe('VTEP helpers', () => {
  it('derives a stable, locally administered unicast MAC per public IP and VNI', () => {
    const a = vtepMac('192.0.2.11', 1);
    assert.equal(a, vtepMac('192.0.2.11', 1));
    assert.notEqual(a, vtepMac('192.0.2.12', 1));
    assert.notEqual(a, vtepMac('192.0.2.11', 2));
    for (let i = 0; i < 200; i++) {
      const first = parseInt(vtepMac(`10.0.${i >> 8}.${i & 255}`, i).slice(0, 2), 16);
      assert.equal(first & 0x03, 0x02, 'locally administered, unicast');
    }
    assert.match(a, /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    assert.equal(vtepName(7), 'flannel.7');
  });

  it('writes and reads the spec next to subnet.env; absent is null, garbage throws', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-vtep-'));
    try {
      const path = vtepSpecPath(join(dir, 'subnet.env'));
      assert.equal(path, join(dir, 'weft-vtep.json'));
      assert.equal(readVtepSpec(path), null);
      const spec: VtepSpec = { name: 'flannel.1', vni: 1, port: 8472, local: '192.0.2.11', uplink: 'eth0', mac: vtepMac('192.0.2.11', 1), mtu: 1450, address: '10.244.3.0/32' };
      writeVtepSpec(path, spec);
      assert.deepEqual(readVtepSpec(path), spec);
      writeFileSync(path, '{"name":1}');
      assert.throws(() => readVtepSpec(path), /not a VTEP spec/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
