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
