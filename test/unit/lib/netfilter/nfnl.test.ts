// nf_tables netlink codecs and the batch exchange, without root: golden bytes for an element request,
// user-data TLVs as libnftnl lays them out, key encodings, and a scripted kernel for commit/dump.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NLM_F_ACK, NLM_F_CREATE, NLM_F_REQUEST } from '../../../../lib/netlink/constants.ts';
import {
  NfnlBatchError, NfnlElemBatch, NfnlSocket, formatElemComment, formatKeyBytes, formatSetElemPayload, listSetElems,
  parseElemComment, parseKeyBytes, parseSetElemPayload, parseUdata, prefixElems, prefixInterval,
} from '../../../../lib/netfilter/nfnl/index.ts';
import { ack, done, FakeKernel, part } from '../netlink/fake-kernel.ts';

const T = { family: 'inet', name: 'weft' } as const;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('user data', () => {
  test('a comment is one TLV: type 0, length with the NUL, text, NUL', () => {
    assert.equal(hex(formatElemComment('ab')), '0003616200');
    assert.equal(parseElemComment(formatElemComment('ctr-1/eth0')), 'ctr-1/eth0');
  });
  test('other TLVs are skipped, a truncated one ends the run', () => {
    const b = Uint8Array.from([1, 2, 9, 9, 0, 3, 0x78, 0x79, 0, 5, 1]);
    assert.deepEqual(parseUdata(b).map((t) => t.type), [1, 0]);
    assert.equal(parseElemComment(b), 'xy');
    assert.equal(parseElemComment(Uint8Array.from([1, 1, 7])), undefined);
  });
  test('refuses more than NFT_USERDATA_MAXLEN', () => {
    assert.throws(() => formatElemComment('x'.repeat(300)), RangeError);
  });
});

describe('keys', () => {
  test('single values in network order, marks in host order', () => {
    assert.equal(hex(formatKeyBytes('ipv4_addr', '10.1.2.3')), '0a010203');
    assert.equal(hex(formatKeyBytes('ipv6_addr', 'fd00::5')), 'fd000000000000000000000000000005');
    assert.equal(hex(formatKeyBytes('inet_service', 8080)), '1f90');
    assert.equal(hex(formatKeyBytes('inet_proto', 'udp')), '11');
    assert.equal(hex(formatKeyBytes('ether_addr', '02:00:00:00:00:0a')), '02000000000a');
    assert.equal(hex(formatKeyBytes('mark', 0x4000)), '00400000');
  });
  test('a concatenation pads every part to 4 bytes', () => {
    const b = formatKeyBytes(['ipv4_addr', 'inet_proto', 'inet_service'], ['10.0.0.1', 'tcp', 80]);
    assert.equal(hex(b), '0a000001' + '06000000' + '00500000');
    assert.deepEqual(parseKeyBytes(['ipv4_addr', 'inet_proto', 'inet_service'], b), ['10.0.0.1', 'tcp', 80]);
  });
  test('bad values name the field', () => {
    assert.throws(() => formatKeyBytes('ipv4_addr', 'fd00::1'), /expected an IPv4 address/);
    assert.throws(() => formatKeyBytes('inet_service', 70000), /port/);
    assert.throws(() => formatKeyBytes(['ipv4_addr', 'inet_service'], ['10.0.0.1']), /2 part/);
  });
  test('prefix intervals: start, end = next prefix, open at the top', () => {
    const iv = prefixInterval('10.1.2.7/24');
    assert.equal(hex(iv.start), '0a010200');
    assert.equal(hex(iv.end ?? new Uint8Array()), '0a010300');
    assert.equal(prefixInterval('255.255.255.0/24').end, null);
    assert.equal(prefixElems('0.0.0.0/0').length, 1);
    assert.equal(hex(prefixInterval('fd00::/64').end ?? new Uint8Array()), 'fd000000000000010000000000000000');
  });
});

describe('element payloads', () => {
  test('golden bytes of a NEWSETELEM payload with a comment', () => {
    const p = formatSetElemPayload('inet', 'weft', 's-1', [{ key: formatKeyBytes('ipv4_addr', '10.0.0.1'), comment: 'c' }]);
    assert.equal(
      hex(p),
      '01000000' + // nfgenmsg: NFPROTO_INET, v0, res_id 0
        '0900' + '0100' + '7765667400000000' + // NFTA_SET_ELEM_LIST_TABLE "weft\0" (+pad)
        '0800' + '0200' + '732d3100' + // NFTA_SET_ELEM_LIST_SET "s-1\0"
        '1c00' + '0300' + // NFTA_SET_ELEM_LIST_ELEMENTS (4 + 24)
        '1800' + '0100' + // NFTA_LIST_ELEM (4 + 12 + 8)
        '0c00' + '0100' + '0800' + '0100' + '0a000001' + // KEY { NFTA_DATA_VALUE 10.0.0.1 }
        '0800' + '0600' + '00026300', // USERDATA: comment TLV "c\0"
    );
    const back = parseSetElemPayload(p);
    assert.equal(back.table, 'weft');
    assert.equal(back.set, 's-1');
    assert.deepEqual(back.elems.map((e) => [hex(e.key), e.comment, e.flags]), [['0a000001', 'c', 0]]);
  });
  test('flags are big-endian; verdict data round-trips', () => {
    const p = formatSetElemPayload('ip', 'weft', 'v-1', [{ key: formatKeyBytes('inet_service', 53), flags: 1, data: { verdict: 'jump', chain: 'c-1' } }]);
    const e = parseSetElemPayload(p).elems[0];
    assert.equal(e?.flags, 1);
    assert.deepEqual(e?.data, { verdict: 'jump', chain: 'c-1' });
    assert.ok(hex(p).includes('08000300' + '00000001'), 'NFTA_SET_ELEM_FLAGS as __be32');
  });
});

describe('NfnlSocket batches against a scripted kernel', () => {
  const NFT = 10 << 8;
  test('BEGIN, commands with ACK and CREATE, END in one send; ACKs collected', () => {
    const k = new FakeKernel((req) => (req.flags & NLM_F_ACK ? [ack(req)] : []));
    new NfnlElemBatch(T).add('s-1', [{ key: formatKeyBytes('ipv4_addr', '10.0.0.1') }]).commit(NfnlSocket.fromTransport(k));
    assert.deepEqual(k.sent.map((m) => m.type), [0x10, NFT | 12, 0x11]);
    assert.equal(k.sent[1]?.flags, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE);
    assert.equal(hex(k.sent[0]?.payload ?? new Uint8Array()), '0000000a', 'batch res_id = NFNL_SUBSYS_NFTABLES, big-endian');
    const seqs = k.sent.map((m) => m.seq);
    assert.deepEqual(seqs, [seqs[0], (seqs[0] ?? 0) + 1, (seqs[0] ?? 0) + 2]);
  });
  test('deletes refused with ENOENT are dropped and the rest retried; other errors throw', () => {
    let round = 0;
    const k = new FakeKernel((req) => {
      if (!(req.flags & NLM_F_ACK)) return [];
      if (req.type === (NFT | 14) && round++ === 0) return [ack(req, 2)];
      return [ack(req)];
    });
    const sock = NfnlSocket.fromTransport(k);
    new NfnlElemBatch(T).delete('s-1', [{ key: formatKeyBytes('ipv4_addr', '10.0.0.1') }, { key: formatKeyBytes('ipv4_addr', '10.0.0.2') }]).commit(sock);
    const batches = k.sent.filter((m) => m.type === 0x10).length;
    assert.equal(batches, 2, 'one retry without the missing element');
    assert.equal(k.sent.filter((m) => m.type === (NFT | 14)).length, 3);

    const k2 = new FakeKernel((req) => (req.flags & NLM_F_ACK ? [ack(req, req.type === (NFT | 12) ? 2 : 0)] : []));
    assert.throws(
      () => new NfnlElemBatch(T).add('gone-1', [{ key: formatKeyBytes('ipv4_addr', '10.0.0.1') }]).commit(NfnlSocket.fromTransport(k2)),
      (e: unknown) => e instanceof NfnlBatchError && e.code === 'ENOENT' && e.failures.length === 1,
    );
  });
  test('a dump is parsed; ENOENT means no such set', () => {
    const elem = formatSetElemPayload('inet', 'weft', 's-1', [{ key: formatKeyBytes('ipv4_addr', '10.0.0.9'), comment: 'x/eth0' }]);
    const k = new FakeKernel((req) => [part(req, NFT | 12, elem), done(req)]);
    const got = listSetElems(NfnlSocket.fromTransport(k), T, 's-1') ?? [];
    assert.deepEqual(got.map((e) => [parseKeyBytes('ipv4_addr', e.key)[0], e.comment]), [['10.0.0.9', 'x/eth0']]);
    assert.equal(k.sent[0]?.type, NFT | 13);
    const k2 = new FakeKernel((req) => [ack(req, 2)]);
    assert.equal(listSetElems(NfnlSocket.fromTransport(k2), T, 's-1'), null);
  });
  test('names and comments are validated before anything is sent', () => {
    assert.throws(() => new NfnlElemBatch(T).add('Bad Name', [{ key: new Uint8Array(4) }]), /invalid set/);
    assert.throws(() => new NfnlElemBatch(T).add('s-1', [{ key: new Uint8Array(4), comment: 'a"b' }]), /element comment/);
  });
});
