// The lean API client's watch against an in-process HTTP server: events line by line, and a silent
// connection ended by the idle watchdog (a dead peer that never sends FIN or RST looks like this).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient } from '../../../../agent/kube/client.ts';

void describe('kube client watch', () => {
  const open: ServerResponse[] = [];
  let server: Server;
  let client: KubeClient;
  before(async () => {
    server = createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      open.push(res);
      // /chatty sends one event per 20 ms; /silent sends one event then nothing, keeping the connection.
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'n1' } } })}\n`);
      if (req.url?.startsWith('/chatty')) {
        const t = setInterval(() => res.write(`${JSON.stringify({ type: 'BOOKMARK', object: {} })}\n`), 20);
        res.on('close', () => clearInterval(t));
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    client = new KubeClient({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  });
  after(() => {
    client.close();
    for (const r of open) r.destroy();
    server.close();
  });

  void it('ends a watch that receives nothing for idleMs with an error', async () => {
    const events: unknown[] = [];
    const t0 = performance.now();
    const w = client.watch('/silent', (ev) => events.push(ev), 300);
    const end = await w.done;
    assert.match(end.error?.message ?? '', /nothing received for 300 ms/);
    assert.ok(performance.now() - t0 >= 250, 'not before the idle time');
    assert.equal(events.length, 1);
  });

  void it('keeps a watch that keeps receiving, until abort()', async () => {
    const events: unknown[] = [];
    const w = client.watch('/chatty', (ev) => events.push(ev), 300);
    await new Promise((r) => setTimeout(r, 800));
    w.abort();
    assert.deepEqual(await w.done, {});
    assert.ok(events.length > 10, `events kept flowing past the idle time (${events.length})`);
  });
});

// The server closing a kept-alive connection just as the next request goes out on it (an idle
// timeout, a load balancer): the request never reached a handler, so it is sent again on a new one.
void describe('kube client on a connection the server closed', () => {
  let server: Server;
  let url = '';
  const seen: string[] = [];
  before(async () => {
    const served = new WeakMap<object, number>();
    server = createServer((req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      seen.push(`${req.url ?? ''}#${n}`);
      // Every second request on one connection is dropped unanswered, as a server closing it would.
      if (n === 2) { req.socket.destroy(); return; }
      res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'keep-alive' });
      if (req.url?.startsWith('/watch')) { res.end(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'w' } } })}\n`); return; }
      res.end(JSON.stringify({ path: req.url }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  void it('sends a request again on a new connection, once', async (t) => {
    const client = new KubeClient({ server: url });
    t.after(() => client.close());
    seen.length = 0;
    assert.deepEqual(await client.call('GET', '/a'), { path: '/a' });
    assert.deepEqual(await client.call('GET', '/b'), { path: '/b' });
    assert.deepEqual(seen, ['/a#1', '/b#2', '/b#1']);
  });

  void it('opens a watch again on a new connection instead of ending it with an error', async (t) => {
    const client = new KubeClient({ server: url });
    t.after(() => client.close());
    seen.length = 0;
    assert.deepEqual(await client.call('GET', '/c'), { path: '/c' });
    const events: unknown[] = [];
    const end = await client.watch('/watch', (ev) => events.push(ev)).done;
    assert.deepEqual(end, {});
    assert.equal(events.length, 1);
    assert.deepEqual(seen, ['/c#1', '/watch#2', '/watch#1']);
  });
});
