// RtnlEvents against the real kernel: notifications from changes in a namespace this test creates.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { withNetns } from '../../../../lib/netns/index.ts';
import { RtnlEvents, type RtnlEvent, type RtnlGroup } from '../../../../lib/netlink/events.ts';
import { NsFixture, type TestNs } from './ns-fixture.ts';

const fx = new NsFixture();
let ns: TestNs;
const subs: RtnlEvents[] = [];
before(() => { ns = fx.create(); });
after(() => { for (const s of subs) s.close(); fx.cleanup(); });

function subscribe(groups: RtnlGroup[]): { events: RtnlEvent[]; waitFor: (pred: (e: RtnlEvent) => boolean) => Promise<RtnlEvent> } {
  const sub = withNetns(ns.handle, () => RtnlEvents.open(groups));
  subs.push(sub);
  const events: RtnlEvent[] = [];
  const waiters: Array<{ pred: (e: RtnlEvent) => boolean; resolve: (e: RtnlEvent) => void }> = [];
  sub.on((ev) => {
    events.push(ev);
    for (const w of waiters.splice(0)) {
      if (w.pred(ev)) w.resolve(ev);
      else waiters.push(w);
    }
  });
  const waitFor = (pred: (e: RtnlEvent) => boolean) => {
    const seen = events.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise<RtnlEvent>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no matching event in 3 s; saw ${events.map((e) => e.type).join(',')}`)), 3000);
      waiters.push({ pred, resolve: (e) => { clearTimeout(t); resolve(e); } });
    });
  };
  return { events, waitFor };
}

test('a link added in the namespace produces newlink; deleting it produces dellink', async () => {
  const { waitFor } = subscribe(['link']);
  ns.rtnl.addBridge({ name: 'evbr0' });
  const ev = await waitFor((e) => e.type === 'newlink' && e.link?.name === 'evbr0');
  assert.equal(ev.link?.kind, 'bridge');
  const index = ev.link!.index;
  ns.rtnl.deleteLink(index);
  const gone = await waitFor((e) => e.type === 'dellink' && e.link?.index === index);
  assert.equal(gone.link?.name, 'evbr0');
});

test('address, route and neighbour notifications', async () => {
  const { waitFor, events } = subscribe(['ipv4-ifaddr', 'ipv4-route', 'neigh']);
  const r = ns.rtnl;
  r.addVeth({ name: 'ev0', peerName: 'ev1' });
  const i = r.getLink('ev0')!.index;
  r.setLinkUp(i);
  r.addAddr({ index: i, cidr: '10.60.0.2/24' });
  r.addRoute({ dst: '10.61.0.0/16', gw: '10.60.0.1', oif: i });
  r.addNeigh({ index: i, ip: '10.60.0.9', mac: '02:00:00:00:00:09', permanent: true });
  assert.equal((await waitFor((e) => e.type === 'newaddr')).addr?.cidr, '10.60.0.2/24');
  assert.equal((await waitFor((e) => e.type === 'newroute' && e.route?.dst === '10.61.0.0/16')).route?.gw, '10.60.0.1');
  assert.equal((await waitFor((e) => e.type === 'newneigh' && e.neigh?.ip === '10.60.0.9')).neigh?.mac, '02:00:00:00:00:09');
  assert.ok(!events.some((e) => e.type === 'newlink'), 'not subscribed to links');
  r.delRoute({ dst: '10.61.0.0/16' });
  await waitFor((e) => e.type === 'delroute' && e.route?.dst === '10.61.0.0/16');
});
