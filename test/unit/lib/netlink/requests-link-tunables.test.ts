// Request bytes of the link verbs tuning uses (allmulti, txqueuelen), as `ip link set` sends them:
// RTM_SETLINK with ifi_flags/ifi_change for IFF_ALLMULTI, an IFLA_TXQLEN u32 attribute for the queue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NLM_F_ACK, NLM_F_REQUEST, RTM_SETLINK } from '../../../../lib/netlink/constants.ts';
import { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { FakeKernel } from './fake-kernel.ts';
import { toHex } from './golden.ts';

function run(fn: (r: Rtnl) => void): FakeKernel {
  const k = new FakeKernel();
  const r = Rtnl.fromTransport(k);
  fn(r);
  r.close();
  return k;
}

test('setAllmulti on/off = ip link set (index 3) allmulticast on/off: IFF_ALLMULTI (0x200) in flags and change', () => {
  let k = run((r) => r.setAllmulti(3, true));
  assert.equal(k.last.type, RTM_SETLINK);
  assert.equal(k.last.flags, NLM_F_REQUEST | NLM_F_ACK);
  assert.equal(toHex(k.last.payload), '00 00 00 00 03 00 00 00 00 02 00 00 00 02 00 00');
  k = run((r) => r.setAllmulti(3, false));
  assert.equal(toHex(k.last.payload), '00 00 00 00 03 00 00 00 00 00 00 00 00 02 00 00');
});

test('setTxQLen = ip link set (index 3) txqueuelen 500: IFLA_TXQLEN (13) u32', () => {
  const k = run((r) => r.setTxQLen(3, 500));
  assert.equal(k.last.type, RTM_SETLINK);
  assert.equal(toHex(k.last.payload), '00 00 00 00 03 00 00 00 00 00 00 00 00 00 00 00 08 00 0d 00 f4 01 00 00');
});
