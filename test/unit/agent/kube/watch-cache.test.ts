// The shared watch cache against an in-process fake API server (plain HTTP on loopback): paged
// lists, watch events in order, bookmarks moving the resume point, a 410 re-list delivered as the
// difference, a silent watch restarted, one informer per spec, and what is trimmed or projected.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient } from '../../../../agent/kube/client.ts';
import { type CacheEvent, type KubeObject, WatchCache, objectKey } from '../../../../agent/kube/watch-cache.ts';
import { createAgentLog } from '../../../../agent/log.ts';

interface Pod extends KubeObject { spec?: { nodeName?: string } }

const pod = (name: string, rv: string, labels: Record<string, string> = {}): Pod => ({
  metadata: { name, namespace: 'x', resourceVersion: rv, labels, managedFields: [{ manager: 'kubectl' }], annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: '1' } } as Pod['metadata'],
});

/** A fake API server whose list and watch answers the test sets; records every request path. */
class FakeApi {
  readonly server: Server;
  readonly paths: string[] = [];
  items: Pod[] = [];
  listRv = '10';
  watches: ServerResponse[] = [];
  constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      this.paths.push(req.url ?? '');
      if (url.pathname !== '/api/v1/pods') return void res.writeHead(404).end('{}');
      if (url.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).flushHeaders();
        this.watches.push(res);
        return;
      }
      // Pages of 2 items: the continue token is the offset.
      const from = Number(url.searchParams.get('continue') ?? '0');
      const limit = Number(url.searchParams.get('limit'));
      const page = this.items.slice(from, from + limit);
      const cont = from + limit < this.items.length ? String(from + limit) : undefined;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ metadata: { resourceVersion: this.listRv, ...(cont ? { continue: cont } : {}) }, items: page }));
    });
  }
  send(ev: unknown): void {
    this.watches.at(-1)?.write(`${JSON.stringify(ev)}\n`);
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

/** Resolves when cond() holds, polling every 5 ms; fails after 3 s. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`timed out waiting for ${what}`);
}

void describe('kube watch cache', () => {
  const api = new FakeApi();
  let client: KubeClient;
  const errors: string[] = [];
  const log = createAgentLog('error', () => undefined);
  before(async () => {
    await new Promise<void>((r) => api.server.listen(0, '127.0.0.1', r));
    client = new KubeClient({ server: api.url });
  });
  after(() => { for (const w of api.watches) w.destroy(); client.close(); api.server.close(); });

  void it('lists in pages, watches from the list version, follows events and bookmarks, re-lists on 410 as a diff', async () => {
    api.items = [pod('a', '1'), pod('b', '2'), pod('c', '3')];
    const cache = new WatchCache(client, { log, pageSize: 2, maxBackoffMs: 50, onError: (_r, e) => errors.push(e.message) });
    try {
      const inf = cache.informer<Pod>({ path: '/api/v1/pods', labelSelector: 'app=web' });
      const events: string[] = [];
      inf.subscribe((ev: CacheEvent<Pod>) => events.push(ev.type === 'synced' ? 'synced' : `${ev.type}:${ev.obj.metadata.name}`));
      await inf.synced;
      assert.deepEqual(inf.list().map(objectKey).sort(), ['x/a', 'x/b', 'x/c']);
      assert.deepEqual(events, ['added:a', 'added:b', 'added:c', 'synced']);
      const lists = api.paths.filter((p) => !p.includes('watch=true'));
      assert.equal(lists.length, 2, 'two pages of 2');
      assert.ok(lists.every((p) => p.includes('labelSelector=app%3Dweb')), 'selector on every page');
      assert.equal(cache.informer<Pod>({ path: '/api/v1/pods', labelSelector: 'app=web' }), inf, 'one informer per spec');

      // What is trimmed: managedFields and kubectl's last-applied copy; other annotations stay.
      const a = inf.get('x/a');
      assert.equal((a?.metadata as { managedFields?: unknown }).managedFields, undefined);
      assert.deepEqual(a?.metadata.annotations, { keep: '1' });

      await until(() => api.watches.length === 1, 'the watch');
      assert.match(api.paths.at(-1) ?? '', /watch=true&allowWatchBookmarks=true&resourceVersion=10/);
      events.length = 0;
      api.send({ type: 'ADDED', object: pod('d', '11') });
      api.send({ type: 'MODIFIED', object: pod('a', '12', { v: '2' }) });
      api.send({ type: 'DELETED', object: pod('b', '13') });
      api.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } });
      await until(() => events.length === 3, 'three events');
      assert.deepEqual(events, ['added:d', 'modified:a', 'deleted:b']);
      assert.deepEqual(inf.get('x/a')?.metadata.labels, { v: '2' });

      // The server ends the watch normally: resumed from the bookmark's version, no list.
      const listsBefore = api.paths.filter((p) => !p.includes('watch=true')).length;
      api.watches.at(-1)?.end();
      await until(() => api.watches.length === 2, 'the resumed watch');
      assert.match(api.paths.at(-1) ?? '', /resourceVersion=20/);
      assert.equal(api.paths.filter((p) => !p.includes('watch=true')).length, listsBefore, 'no re-list on a normal end');

      // 410 Gone: re-list; the cache now holds a, c (changed), e; d is gone.
      events.length = 0;
      api.items = [pod('a', '12', { v: '2' }), pod('c', '30'), pod('e', '31')];
      api.listRv = '40';
      api.send({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } });
      await until(() => events.includes('synced'), 'the re-list');
      assert.deepEqual(events.sort(), ['added:e', 'deleted:d', 'modified:c', 'synced']);
      await until(() => api.watches.length === 3, 'the watch after the re-list');
      assert.match(api.paths.at(-1) ?? '', /resourceVersion=40/);
      assert.deepEqual(errors, [], '410 is routine, not an error');
    } finally {
      cache.stop();
    }
  });

  void it('restarts a watch silent for idleMs and keeps delivering after a subscriber throws', async () => {
    api.items = [pod('a', '1')];
    api.listRv = '5';
    api.watches = [];
    const cache = new WatchCache(client, { log, idleMs: 150, maxBackoffMs: 20, onError: (_r, e) => errors.push(e.message) });
    try {
      const inf = cache.informer<Pod>({ path: '/api/v1/pods' });
      const seen: string[] = [];
      inf.subscribe(() => { throw new Error('boom'); });
      inf.subscribe((ev) => { if (ev.type !== 'synced') seen.push(ev.obj.metadata.name); });
      await inf.synced;
      await until(() => api.watches.length >= 2, 'a second watch after the silence');
      assert.ok(errors.some((m) => m.includes('nothing received')), `the silence is reported: ${errors.join('; ')}`);
      api.send({ type: 'ADDED', object: pod('z', '9') });
      await until(() => seen.includes('z'), 'the event past the throwing subscriber');
      assert.ok(errors.some((m) => m.includes('subscriber failed')));
    } finally {
      cache.stop();
    }
  });

  void it('a projection keeps what it returns, on the list and on watch events, in an informer of its own', async () => {
    api.items = [pod('a', '1', { app: 'web', other: 'x' })];
    api.listRv = '5';
    api.watches = [];
    const cache = new WatchCache(client, { log, maxBackoffMs: 20 });
    try {
      const keepApp = { name: 'app-only', fn: (o: KubeObject): KubeObject => ({ metadata: { name: o.metadata.name, namespace: o.metadata.namespace ?? '', resourceVersion: o.metadata.resourceVersion ?? '', labels: { app: o.metadata.labels?.app ?? '' } } }) };
      const inf = cache.informer<Pod>({ path: '/api/v1/pods', project: keepApp });
      const seen: Pod[] = [];
      inf.subscribe((ev) => { if (ev.type !== 'synced') seen.push(ev.obj); });
      await inf.synced;
      assert.deepEqual(inf.get('x/a')?.metadata, { name: 'a', namespace: 'x', resourceVersion: '1', labels: { app: 'web' } });
      await until(() => api.watches.length >= 1, 'the watch');
      api.send({ type: 'ADDED', object: pod('b', '6', { app: 'db', more: 'y' }) });
      await until(() => inf.get('x/b') !== undefined, 'the watch event');
      assert.deepEqual(inf.get('x/b')?.metadata, { name: 'b', namespace: 'x', resourceVersion: '6', labels: { app: 'db' } });
      assert.deepEqual(seen.at(-1)?.metadata.labels, { app: 'db' });
      // Made last: its own watch must not take the events above.
      assert.notEqual(cache.informer<Pod>({ path: '/api/v1/pods' }), inf, 'projected and full informers are apart');
    } finally {
      cache.stop();
    }
  });
});
