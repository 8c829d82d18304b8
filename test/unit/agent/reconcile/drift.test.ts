import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RtnlEvent } from '../../../../lib/netlink/index.ts';
import { isDrift } from '../../../../agent/reconcile/drift.ts';
import { RTPROT_WEFT } from '../../../../agent/reconcile/desired.ts';

const conf = { network: '10.0.0.0/8', ipv6Network: 'fd00::/48' };
const dev = { uplink: 2, vtep: 5, vtep6: 6 };
const route = (type: 'newroute' | 'delroute', r: { dst: string; protocol: number; table?: number; family?: 4 | 6 }) =>
  ({ type, route: { family: 4, table: 254, ...r } }) as unknown as RtnlEvent;
const never = () => false;

void describe('isDrift', () => {
  it('weft routes only when removed; foreign routes when inside the Network; other tables never', () => {
    assert.equal(isDrift(route('newroute', { dst: '10.1.0.0/24', protocol: RTPROT_WEFT }), conf, dev, never), false);
    assert.equal(isDrift(route('delroute', { dst: '10.1.0.0/24', protocol: RTPROT_WEFT }), conf, dev, never), true);
    assert.equal(isDrift(route('newroute', { dst: '10.1.0.0/24', protocol: 4 }), conf, dev, never), true);
    assert.equal(isDrift(route('newroute', { dst: '192.168.0.0/24', protocol: 4 }), conf, dev, never), false);
    assert.equal(isDrift(route('newroute', { dst: 'fd00:0:0:1::/64', protocol: 4, family: 6 }), conf, dev, never), true);
    assert.equal(isDrift(route('delroute', { dst: '10.1.0.0/24', protocol: RTPROT_WEFT, table: 100 }), conf, dev, never), false);
  });

  it('neighbours: only removals on a VTEP; overruns always; links as the backend says', () => {
    const neigh = (type: string, index: number) => ({ type, neigh: { index } }) as unknown as RtnlEvent;
    assert.equal(isDrift(neigh('delneigh', 5), conf, dev, never), true);
    assert.equal(isDrift(neigh('delneigh', 6), conf, dev, never), true);
    assert.equal(isDrift(neigh('newneigh', 5), conf, dev, never), false);
    assert.equal(isDrift(neigh('delneigh', 2), conf, dev, never), false);
    assert.equal(isDrift(neigh('delneigh', 5), conf, undefined, never), false, 'before the first pass knows the VTEP');
    assert.equal(isDrift({ type: 'overrun' } as RtnlEvent, conf, dev, never), true);
    const link = { type: 'dellink', link: { name: 'flannel.1' } } as unknown as RtnlEvent;
    assert.equal(isDrift(link, conf, dev, () => true), true);
    assert.equal(isDrift(link, conf, dev, never), false);
  });
});
