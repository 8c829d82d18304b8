// Decoding of kernel-shaped RTM_NEW* payloads (built attribute by attribute here; the namespace
// tests decode the real kernel's answers), including the raw bytes of attributes we do not know.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attrBe16, attrNested, attrS32, attrStr, attrU16, attrU32, attrU8, formatAttr } from '../../../../lib/netlink/attrs.ts';
import { AF_BRIDGE, AF_INET, AF_INET6, IFLA_ADDRESS, IFLA_IFNAME, IFLA_LINK, IFLA_LINKINFO, IFLA_LINK_NETNSID, IFLA_MASTER, IFLA_MTU, IFLA_OPERSTATE, RTM_DELNEIGH, RTM_NEWLINK, RTM_NEWNEIGH, RTM_NEWROUTE } from '../../../../lib/netlink/constants.ts';
import { parseRtnlEvent } from '../../../../lib/netlink/events.ts';
import { parseFdb } from '../../../../lib/netlink/fdb.ts';
import { formatIfaddr, parseAddr } from '../../../../lib/netlink/ifaddr.ts';
import { formatIfinfo, parseLink } from '../../../../lib/netlink/link.ts';
import { formatNdmsg, parseNeigh } from '../../../../lib/netlink/neigh.ts';
import { formatRtmsg, parseRoute } from '../../../../lib/netlink/route.ts';
import { hex, toHex } from './golden.ts';

test('parseLink: veth in another netns, bridge port, unknown attributes kept', () => {
  const payload = formatIfinfo({ type: 1, index: 5, flags: 0x1003, change: 0 }, [
    attrStr(IFLA_IFNAME, 'veth1234abcd'),
    attrU32(IFLA_MTU, 1450),
    formatAttr(IFLA_ADDRESS, hex('0a 58 0a f4 00 01')),
    attrU32(IFLA_MASTER, 3),
    attrU32(IFLA_LINK, 2),
    attrS32(IFLA_LINK_NETNSID, 0),
    attrU8(IFLA_OPERSTATE, 6),
    attrNested(IFLA_LINKINFO, [formatAttr(1, Buffer.from('veth')), attrStr(4, 'bridge')]),
    attrU32(13, 1000), // IFLA_TXQLEN
    attrU32(27, 7), // IFLA_GROUP: not decoded
  ]);
  const l = parseLink(payload);
  assert.deepEqual({ ...l, extra: undefined }, {
    index: 5, name: 'veth1234abcd', flags: 0x1003, up: true, type: 1, mtu: 1450, mac: '0a:58:0a:f4:00:01', master: 3,
    peerIndex: 2, linkNetnsId: 0, txqlen: 1000, operState: 'up', kind: 'veth', slaveKind: 'bridge', extra: undefined,
  });
  assert.deepEqual(l.extra.map((e) => [e.type, toHex(e.data)]), [[27, '07 00 00 00']]);
});

test('parseLink: vxlan info data', () => {
  const data = [attrU32(1, 1), formatAttr(4, hex('c0 a8 01 02')), attrU8(7, 0), attrBe16(15, 8472), attrU32(3, 2)];
  const l = parseLink(formatIfinfo({ index: 9, flags: 0 }, [attrStr(IFLA_IFNAME, 'flannel.1'), attrNested(IFLA_LINKINFO, [formatAttr(1, Buffer.from('vxlan')), attrNested(2, data)])]));
  assert.equal(l.up, false);
  assert.equal(l.operState, 'unknown');
  assert.deepEqual(l.vxlan, { vni: 1, port: 8472, local: '192.168.1.2', devIndex: 2, learning: false });
});

test('parseAddr: IPv4 with label and broadcast, IPv6 with IFA_FLAGS', () => {
  const v4 = parseAddr(formatIfaddr({ family: AF_INET, prefix: 24, scope: 0, index: 3 }, [
    formatAttr(1, hex('0a 00 00 02')), formatAttr(2, hex('0a 00 00 02')), attrStr(3, 'eth0'), formatAttr(4, hex('0a 00 00 ff')), formatAttr(6, new Uint8Array(16)),
  ]));
  assert.deepEqual({ ...v4, extra: v4?.extra.map((e) => e.type) }, {
    index: 3, family: 4, cidr: '10.0.0.2/24', address: '10.0.0.2', prefix: 24, scope: 0, flags: 0, label: 'eth0', broadcast: '10.0.0.255', extra: [6],
  });
  const v6 = parseAddr(formatIfaddr({ family: AF_INET6, prefix: 64, flags: 0x80, scope: 0, index: 3 }, [formatAttr(1, hex('fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02')), attrU32(8, 0x282)]));
  assert.equal(v6?.cidr, 'fd00::2/64');
  assert.equal(v6?.flags, 0x282); // IFA_FLAGS wins over the 8-bit header field
  assert.equal(parseAddr(formatIfaddr({ family: AF_BRIDGE, index: 1 })), null);
});

test('parseRoute: default route, table 100 from RTA_TABLE, metrics, onlink', () => {
  const r = parseRoute(formatRtmsg({ family: AF_INET, dstLen: 0, table: 100, protocol: 3, scope: 0, type: 1, flags: 4 }, [
    formatAttr(5, hex('0a 00 00 01')), attrU32(4, 3), attrU32(15, 100), attrU32(6, 50), attrNested(8, [attrU32(2, 1400), attrU32(8, 1360)]), formatAttr(7, hex('0a 00 00 02')),
  ]));
  assert.deepEqual({ ...r, extra: r?.extra.length }, {
    family: 4, dst: '0.0.0.0/0', gw: '10.0.0.1', oif: 3, onlink: true, scope: 0, table: 100, protocol: 3, type: 1, flags: 4,
    priority: 50, mtu: 1400, advmss: 1360, src: '10.0.0.2', extra: 0,
  });
  const r6 = parseRoute(formatRtmsg({ family: AF_INET6, dstLen: 64, table: 254 }, [formatAttr(1, hex('fd 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00'))]));
  assert.equal(r6?.dst, 'fd00:0:0:1::/64');
  assert.equal(r6?.table, 254);
  assert.equal(parseRoute(formatRtmsg({ family: 128 })), null); // RTNL_FAMILY_IPMR
});

test('parseNeigh and parseFdb split by family', () => {
  const n = parseNeigh(formatNdmsg({ family: AF_INET, index: 4, state: 0x80 }, [formatAttr(1, hex('0a f4 01 00')), formatAttr(2, hex('aa bb cc dd ee ff'))]));
  assert.deepEqual({ ...n, extra: n?.extra.length }, { family: 4, index: 4, ip: '10.244.1.0', mac: 'aa:bb:cc:dd:ee:ff', state: 0x80, permanent: true, flags: 0, extra: 0 });
  const fdbPayload = formatNdmsg({ family: AF_BRIDGE, index: 6, state: 0x80, flags: 2 }, [formatAttr(2, hex('aa bb cc dd ee ff')), formatAttr(1, hex('c0 a8 00 07')), attrU32(9, 3), attrU16(5, 1), attrU32(7, 1), attrBe16(6, 8472)]);
  assert.equal(parseNeigh(fdbPayload), null);
  const f = parseFdb(fdbPayload);
  assert.deepEqual({ ...f, extra: f?.extra.length }, {
    index: 6, mac: 'aa:bb:cc:dd:ee:ff', dst: '192.168.0.7', master: 3, vlan: 1, vni: 1, port: 8472, state: 0x80, permanent: true, flags: 2, self: true, extra: 0,
  });
  assert.equal(parseRtnlEvent({ type: RTM_DELNEIGH, payload: fdbPayload })?.fdb?.dst, '192.168.0.7');
});

test('parseRtnlEvent maps message types and ignores others', () => {
  assert.equal(parseRtnlEvent({ type: RTM_NEWLINK, payload: formatIfinfo({ index: 2 }, [attrStr(IFLA_IFNAME, 'x')]) })?.link?.name, 'x');
  assert.equal(parseRtnlEvent({ type: RTM_NEWROUTE, payload: formatRtmsg({ family: AF_INET, table: 254 }) })?.type, 'newroute');
  assert.equal(parseRtnlEvent({ type: RTM_NEWNEIGH, payload: formatNdmsg({ family: AF_INET6, index: 1 }) })?.neigh?.family, 6);
  assert.equal(parseRtnlEvent({ type: 99, payload: new Uint8Array(0) }), null);
});
