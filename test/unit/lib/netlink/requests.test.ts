// Request bytes of every Rtnl verb, compared with what iproute2 sends for the same command
// (captured with `strace -e trace=sendmsg -xx` in a scratch namespace; payload after nlmsghdr).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AF_BRIDGE, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE, NLM_F_REQUEST, RTM_DELLINK, RTM_DELROUTE, RTM_NEWADDR,
  RTM_NEWLINK, RTM_NEWNEIGH, RTM_NEWROUTE, RTM_SETLINK,
} from '../../../../lib/netlink/constants.ts';
import { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { FakeKernel } from './fake-kernel.ts';
import { sx, toHex } from './golden.ts';

const CREATE = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
const Z16 = String.raw`\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00`;

function run(fn: (r: Rtnl) => void): FakeKernel {
  const k = new FakeKernel();
  const r = Rtnl.fromTransport(k);
  fn(r);
  r.close();
  assert.ok(k.closed);
  return k;
}

function expectMsg(k: FakeKernel, type: number, flags: number, strace: string): void {
  assert.equal(k.last.type, type);
  assert.equal(k.last.flags, flags);
  assert.equal(toHex(k.last.payload), toHex(sx(strace)));
}

test('addVeth = ip link add v0 type veth peer name v1', () => {
  const k = run((r) => r.addVeth({ name: 'v0', peerName: 'v1' }));
  expectMsg(k, RTM_NEWLINK, CREATE, Z16 + String.raw`\x07\x00\x03\x00\x76\x30\x00\x00\x2c\x00\x12\x00\x08\x00\x01\x00\x76\x65\x74\x68\x20\x00\x02\x00\x1c\x00\x01\x00` + Z16 + String.raw`\x07\x00\x03\x00\x76\x31\x00\x00`);
});

test('addVeth with peer netns fd, MTU and MACs puts them on the right side', () => {
  const k = run((r) => r.addVeth({ name: 'a', peerName: 'b', peerNetnsFd: 9, mtu: 1450, mac: '02:00:00:00:00:01', peerMac: '02:00:00:00:00:02' }));
  const hexs = toHex(k.last.payload);
  // host side: IFNAME a, MTU, ADDRESS; peer (inside VETH_INFO_PEER): IFNAME b, MTU, ADDRESS, NET_NS_FD 9
  assert.match(hexs, /^(00 ){16}06 00 03 00 61 00 00 00 08 00 04 00 aa 05 00 00 0a 00 01 00 02 00 00 00 00 01 00 00/);
  assert.match(hexs, /06 00 03 00 62 00 00 00 08 00 04 00 aa 05 00 00 0a 00 01 00 02 00 00 00 00 02 00 00 08 00 1c 00 09 00 00 00$/);
});

test('addVxlan = ip link add vx1 type vxlan id 42 dstport 8472 local 10.0.0.2 nolearning', () => {
  const k = run((r) => r.addVxlan({ name: 'vx1', vni: 42, port: 8472, local: '10.0.0.2', learning: false }));
  expectMsg(k, RTM_NEWLINK, CREATE, Z16 + String.raw`\x08\x00\x03\x00\x76\x78\x31\x00\x34\x00\x12\x00\x09\x00\x01\x00\x76\x78\x6c\x61\x6e\x00\x00\x00\x24\x00\x02\x00\x08\x00\x01\x00\x2a\x00\x00\x00\x08\x00\x04\x00\x0a\x00\x00\x02\x05\x00\x07\x00\x00\x00\x00\x00\x06\x00\x0f\x00\x21\x18\x00\x00`);
});

test('setMaster = ip link set (index 2) master (index 4); setLinkUp sets IFF_UP in flags and change', () => {
  let k = run((r) => r.setMaster(2, 4));
  expectMsg(k, RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, String.raw`\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x08\x00\x0a\x00\x04\x00\x00\x00`);
  k = run((r) => r.setLinkUp(7));
  assert.equal(toHex(k.last.payload), '00 00 00 00 07 00 00 00 01 00 00 00 01 00 00 00');
  k = run((r) => r.setLinkDown(7));
  assert.equal(toHex(k.last.payload), '00 00 00 00 07 00 00 00 00 00 00 00 01 00 00 00');
  k = run((r) => r.deleteLink(7));
  assert.equal(k.last.type, RTM_DELLINK);
});

test('setHairpin = bridge link set dev (index 2) hairpin on: AF_BRIDGE, IFLA_PROTINFO with NLA_F_NESTED', () => {
  const k = run((r) => r.setHairpin(2, true));
  expectMsg(k, RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, String.raw`\x07\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x0c\x00\x0c\x80\x05\x00\x04\x00\x01\x00\x00\x00`);
  assert.equal(k.last.payload[0], AF_BRIDGE);
});

test('addAddr = ip addr add 10.0.0.2/24 dev (index 3)', () => {
  const k = run((r) => r.addAddr({ index: 3, cidr: '10.0.0.2/24' }));
  expectMsg(k, RTM_NEWADDR, CREATE, String.raw`\x02\x18\x00\x00\x03\x00\x00\x00\x08\x00\x02\x00\x0a\x00\x00\x02\x08\x00\x01\x00\x0a\x00\x00\x02`);
});

test('addAddr IPv6 nodad = ip -6 addr add fd00::2/64 dev (index 3) nodad', () => {
  const k = run((r) => r.addAddr({ index: 3, cidr: 'fd00::2/64', noDad: true }));
  const a = String.raw`\xfd\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02`;
  expectMsg(k, RTM_NEWADDR, CREATE, String.raw`\x0a\x40\x02\x00\x03\x00\x00\x00\x14\x00\x02\x00` + a + String.raw`\x14\x00\x01\x00` + a);
});

test('addAddr replace uses NLM_F_REPLACE instead of NLM_F_EXCL', () => {
  const k = run((r) => r.addAddr({ index: 3, cidr: '10.0.0.2/24', replace: true }));
  assert.equal(k.last.flags, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE);
});

test('addRoute = ip route add 10.1.0.0/16 via 10.9.9.9 dev (index 3) onlink', () => {
  const k = run((r) => r.addRoute({ dst: '10.1.0.0/16', gw: '10.9.9.9', oif: 3, onlink: true }));
  expectMsg(k, RTM_NEWROUTE, CREATE, String.raw`\x02\x10\x00\x00\xfe\x03\x00\x01\x04\x00\x00\x00\x08\x00\x01\x00\x0a\x01\x00\x00\x08\x00\x05\x00\x0a\x09\x09\x09\x08\x00\x04\x00\x03\x00\x00\x00`);
});

test('addRoute defaults: link scope without gateway; table > 255 goes to RTA_TABLE; metrics nested', () => {
  let k = run((r) => r.addRoute({ dst: '10.5.0.0/24', oif: 3 }));
  assert.equal(toHex(k.last.payload.subarray(0, 12)), '02 18 00 00 fe 03 fd 01 00 00 00 00');
  k = run((r) => r.addRoute({ dst: '0.0.0.0/0', gw: '10.0.0.1', table: 1000, mtu: 1400, advmss: 1360 }));
  assert.equal(toHex(k.last.payload), '02 00 00 00 00 03 00 01 00 00 00 00 08 00 05 00 0a 00 00 01 14 00 08 00 08 00 02 00 78 05 00 00 08 00 08 00 50 05 00 00 08 00 0f 00 e8 03 00 00');
  k = run((r) => r.delRoute({ dst: '10.5.0.0/24' }));
  assert.equal(k.last.type, RTM_DELROUTE);
  // delete wildcards: protocol 0, scope RT_SCOPE_NOWHERE, type 0
  assert.equal(toHex(k.last.payload.subarray(0, 12)), '02 18 00 00 fe 00 ff 00 00 00 00 00');
  assert.throws(() => run((r) => r.addRoute({ dst: '10.0.0.0/8', gw: 'fd00::1' })), /not in the family/);
});

test('addNeigh = ip neigh add 10.0.0.5 lladdr aa:bb:cc:00:11:22 dev (index 3) nud permanent', () => {
  const k = run((r) => r.addNeigh({ index: 3, ip: '10.0.0.5', mac: 'AA:BB:CC:00:11:22', permanent: true }));
  expectMsg(k, RTM_NEWNEIGH, CREATE, String.raw`\x02\x00\x00\x00\x03\x00\x00\x00\x80\x00\x00\x00\x08\x00\x01\x00\x0a\x00\x00\x05\x0a\x00\x02\x00\xaa\xbb\xcc\x00\x11\x22\x00\x00`);
});

test('addFdb = bridge fdb add aa:bb:cc:00:11:22 dev (index 2) dst 10.0.0.7 self permanent', () => {
  const k = run((r) => r.addFdb({ index: 2, mac: 'aa:bb:cc:00:11:22', dst: '10.0.0.7' }));
  expectMsg(k, RTM_NEWNEIGH, CREATE, String.raw`\x07\x00\x00\x00\x02\x00\x00\x00\xc0\x00\x02\x00\x0a\x00\x02\x00\xaa\xbb\xcc\x00\x11\x22\x00\x00\x08\x00\x01\x00\x0a\x00\x00\x07`);
});
