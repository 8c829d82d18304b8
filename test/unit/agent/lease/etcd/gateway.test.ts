// etcd's JSON gateway protocol as weftd's client speaks it: stream splitting at any chunk boundary,
// defaults the gateway leaves out, error bodies, and (against a local node:http server playing the
// gateway) token renewal, failover, keep-alive and the watch's resume and cancel. No root, no etcd.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import type { EtcdKeyValue } from '../../../../../agent/lease/etcd/api.ts';
import { GatewayEtcdApi } from '../../../../../agent/lease/etcd/gateway-kv.ts';
import { JsonObjectSplitter } from '../../../../../agent/lease/etcd/gateway-watch.ts';
import { formatTxn, headerRevision, int64, isInvalidTokenError, parseGatewayError, parseGatewayKv } from '../../../../../agent/lease/etcd/gateway-json.ts';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

void describe('JsonObjectSplitter', () => {
  const objs = [
    { result: { header: { revision: '7' }, created: true } },
    { result: { events: [{ kv: { key: b64('/p/a'), value: b64('{"x":"}{\\"[') } }], note: 'brace } and quote " and \\ in a string' } },
    { error: { grpc_code: 14, message: 'unavailable' } },
  ];
  const text = objs.map((o) => JSON.stringify(o)).join('\n') + '\n';

  void it('yields the same objects whichever two places the stream is cut at', () => {
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j += 7) {
        const s = new JsonObjectSplitter();
        const got = [...s.push(text.slice(0, i)), ...s.push(text.slice(i, j)), ...s.push(text.slice(j))];
        assert.deepEqual(got, objs, `cut at ${i} and ${j}`);
      }
    }
  });

  void it('takes objects with no separator, and refuses what is not JSON', () => {
    assert.deepEqual(new JsonObjectSplitter().push('{"a":1}{"b":[2]}  {"c":{}}'), [{ a: 1 }, { b: [2] }, { c: {} }]);
    assert.throws(() => new JsonObjectSplitter().push('{"a":tru}'), SyntaxError);
  });
});

void describe('gateway fields', () => {
  void it('reads the defaults the gateway leaves out as zero', () => {
    assert.deepEqual(parseGatewayKv({ key: b64('/k') }), { key: '/k', value: Buffer.alloc(0), createRevision: '0', modRevision: '0', lease: '0' });
    assert.deepEqual(parseGatewayKv({ key: b64('/k'), value: b64('v'), create_revision: '12', mod_revision: '9007199254740993', lease: '7587869' }),
      { key: '/k', value: Buffer.from('v'), createRevision: '12', modRevision: '9007199254740993', lease: '7587869' });
    assert.equal(headerRevision({}), 0);
    assert.equal(headerRevision({ header: { cluster_id: '1', revision: '42' } }), 42);
    assert.equal(int64(undefined), '0');
    assert.equal(int64('x1'), '0', 'not a number: the zero default');
  });

  void it('writes a txn as the gateway takes it (enum names, int64 as strings, base64 keys)', () => {
    assert.deepEqual(formatTxn('/k', 'create', '0', { request_put: { key: b64('/k'), value: b64('v'), lease: '5' } }), {
      compare: [{ result: 'EQUAL', key: b64('/k'), target: 'CREATE', create_revision: '0' }],
      success: [{ request_put: { key: b64('/k'), value: b64('v'), lease: '5' } }],
    });
    assert.deepEqual(formatTxn('/k', 'mod', '17', { request_delete_range: { key: b64('/k') } }).compare, [{ result: 'EQUAL', key: b64('/k'), target: 'MOD', mod_revision: '17' }]);
  });

  void it('quotes etcd\'s message from unary and stream error bodies, and explains the client-certificate refusal', () => {
    assert.equal(parseGatewayError('{"error":"etcdserver: invalid auth token","code":16,"message":"etcdserver: invalid auth token"}'), 'etcdserver: invalid auth token');
    assert.equal(parseGatewayError('{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader ","http_status":"Service Unavailable"}}'), 'etcdserver: no leader');
    assert.equal(parseGatewayError('404 page not found\n'), '404 page not found');
    assert.match(parseGatewayError('CommonName of client sending a request against gateway will be ignored and not used as expected\n'), /as expected: with etcd auth on, the JSON gateway takes no client certificate/);
    assert.match(parseGatewayError('{"message":"CommonName of client sending a request against gateway will be ignored and not used as expected"}'), /takes no client certificate/);
    assert.ok(isInvalidTokenError('etcd http://x: etcdserver: invalid auth token (HTTP 401)'));
    assert.ok(!isInvalidTokenError('etcdserver: authentication failed, invalid user ID or password'));
  });
});

/** A fake gateway: handlers by path; the request body arrives parsed. */
type Handler = (body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse) => void;

void describe('GatewayEtcdApi against a local fake gateway', () => {
  let server: Server;
  let url = '';
  const handlers = new Map<string, Handler>();
  const seen: Array<{ path: string; auth: string | undefined; body: Record<string, unknown> }> = [];
  const json = (res: ServerResponse, status: number, o: unknown): void => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(o)); };

  before(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => { text += c.toString(); });
      req.on('end', () => {
        const body = JSON.parse(text || '{}') as Record<string, unknown>;
        const path = req.url ?? '';
        seen.push({ path, auth: req.headers.authorization, body });
        const h = handlers.get(path);
        if (h) h(body, req, res);
        else json(res, 404, { error: 'Not Found', code: 5, message: 'Not Found' });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => { server.closeAllConnections(); server.close(); });

  void it('renews a token etcd calls invalid, once, and retries the call', async () => {
    handlers.clear();
    seen.length = 0;
    let issued = 0;
    let valid = '';
    handlers.set('/v3/auth/authenticate', (b, _q, res) => {
      assert.deepEqual(b, { name: 'u', password: 'p' });
      valid = `tok${++issued}`;
      json(res, 200, { header: {}, token: valid });
    });
    handlers.set('/v3/kv/range', (_b, req, res) => {
      if (req.headers.authorization !== valid) { json(res, 401, { error: 'etcdserver: invalid auth token', code: 16, message: 'etcdserver: invalid auth token' }); return; }
      json(res, 200, { header: { revision: '3' }, kvs: [{ key: b64('/c'), value: b64('v'), mod_revision: '2', create_revision: '2' }], count: '1' });
    });
    const api = new GatewayEtcdApi([url], { username: 'u', password: 'p' });
    try {
      assert.equal((await api.get('/c')).kv?.value.toString(), 'v');
      valid = 'expired-by-etcd'; // etcd forgot tok1 (--auth-token-ttl, or a restart)
      const { kv, revision } = await api.get('/c');
      assert.equal(kv?.modRevision, '2');
      assert.equal(revision, 3);
      assert.equal(issued, 2);
      assert.deepEqual(seen.map((s) => `${s.path} ${s.auth ?? '-'}`), ['/v3/auth/authenticate -', '/v3/kv/range tok1', '/v3/kv/range tok1', '/v3/auth/authenticate -', '/v3/kv/range tok2']);
      // A wrong password is etcd's answer, not a token to renew.
      handlers.set('/v3/auth/authenticate', (_b, _q, res) => json(res, 400, { error: 'etcdserver: authentication failed, invalid user ID or password', code: 3 }));
      valid = 'gone';
      await assert.rejects(api.get('/c'), /authentication failed/);
    } finally {
      api.close();
    }
  });

  void it('reads an absent `succeeded` as a failed txn, fails over past a dead endpoint, and stops at an etcd error', async () => {
    handlers.clear();
    let succeed = false;
    handlers.set('/v3/kv/txn', (b, _q, res) => {
      assert.equal((b['compare'] as Array<Record<string, unknown>>)[0]?.['target'], 'CREATE');
      json(res, 200, succeed ? { header: { revision: '9' }, succeeded: true, responses: [{ response_put: { header: {} } }] } : { header: { revision: '8' } });
    });
    handlers.set('/v3/kv/deleterange', (_b, _q, res) => json(res, 400, { error: 'etcdserver: permission denied', code: 7, message: 'etcdserver: permission denied' }));
    const api = new GatewayEtcdApi(['http://127.0.0.1:1', url], {}, 2000);
    try {
      assert.deepEqual(await api.putIf('/k', 'create', '0', 'v', '5'), { succeeded: false, revision: 8 });
      succeed = true;
      assert.deepEqual(await api.putIf('/k', 'create', '0', 'v', '5'), { succeeded: true, revision: 9 });
      await assert.rejects(api.delete('/k'), /permission denied \(HTTP 400\)/);
    } finally {
      api.close();
    }
  });

  void it('keep-alive: sends one request on the stream, reads the first result split over chunks; an unknown lease is TTL 0', async () => {
    handlers.clear();
    handlers.set('/v3/lease/keepalive', (b, _q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = b['ID'] === '77' ? '{"result":{"header":{"revision":"4"},"ID":"77","TTL":"86400"}}\n' : '{"result":{"header":{"revision":"4"},"ID":"78"}}\n';
      res.write(text.slice(0, 20));
      setTimeout(() => res.write(text.slice(20)), 20); // the stream stays open: the client closes it
    });
    const api = new GatewayEtcdApi([url]);
    try {
      assert.equal(await api.leaseKeepAlive('77'), 86400);
      assert.equal(await api.leaseKeepAlive('78'), 0);
    } finally {
      api.close();
    }
  });

  void it('watch: PUT without a type, DELETE, resume from the last revision + 1 after a break, then re-list; compaction cancels', async () => {
    handlers.clear();
    const creates: Array<Record<string, unknown>> = [];
    let conn = 0;
    handlers.set('/v3/watch', (b, _q, res) => {
      creates.push(b['create_request'] as Record<string, unknown>);
      res.writeHead(200, { 'content-type': 'application/json' });
      const n = ++conn;
      if (n === 1) {
        const text = `${JSON.stringify({ result: { header: { revision: '10' }, created: true } })}\n${JSON.stringify({ result: { header: { revision: '11' }, events: [
          { kv: { key: b64('/p/a'), value: b64('A'), mod_revision: '11', create_revision: '11' } },
          { type: 'DELETE', kv: { key: b64('/p/b'), mod_revision: '12' } },
        ] } })}\n`;
        // cut in three anywhere, then the connection breaks
        res.write(text.slice(0, 33));
        setTimeout(() => res.write(text.slice(33, 101)), 10);
        setTimeout(() => { res.write(text.slice(101)); setTimeout(() => res.destroy(), 10); }, 20);
      } else if (n === 2) {
        res.write(`${JSON.stringify({ result: { header: { revision: '13' }, created: true } })}\n`);
        setTimeout(() => res.write(`${JSON.stringify({ result: { header: { revision: '13' }, canceled: true, compact_revision: '20', cancel_reason: 'mvcc: required revision has been compacted' } })}\n`), 10);
      }
    });
    const api = new GatewayEtcdApi([url]);
    const events: Array<[string, EtcdKeyValue]> = [];
    const calls: string[] = [];
    try {
      await new Promise<void>((resolve) => {
        api.watch('/p/', 5, {
          onEvent: (type, kv) => { events.push([type, kv]); calls.push(`${type} ${kv.key}`); },
          onReconnected: () => calls.push('reconnected'),
          onError: () => calls.push('error'),
          onCanceled: (err) => { calls.push(`canceled: ${err.message}`); resolve(); },
        });
      });
      assert.deepEqual(calls, ['put /p/a', 'delete /p/b', 'error', 'reconnected', 'canceled: start revision 13 compacted (etcd keeps from 20)']);
      assert.equal(events[0]?.[1].value.toString(), 'A');
      assert.deepEqual(creates.map((c) => c['start_revision']), ['5', '13']);
      assert.deepEqual(creates[0], { key: b64('/p/'), range_end: b64('/p0'), start_revision: '5' });
    } finally {
      api.close();
    }
  });

  void it('watch: a token etcd refuses at creation is asked again and the watch resumes (no cancel reported)', async () => {
    handlers.clear();
    let issued = 0;
    handlers.set('/v3/auth/authenticate', (_b, _q, res) => json(res, 200, { header: {}, token: `tok${++issued}` }));
    const auths: Array<string | undefined> = [];
    handlers.set('/v3/watch', (_b, req, res) => {
      auths.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.headers.authorization === 'tok1') {
        res.write(`${JSON.stringify({ result: { header: { revision: '3' }, created: true, canceled: true, cancel_reason: 'etcdserver: invalid auth token' } })}\n`);
        return;
      }
      res.write(`${JSON.stringify({ result: { header: { revision: '3' }, created: true } })}\n`);
      res.write(`${JSON.stringify({ result: { header: { revision: '4' }, events: [{ kv: { key: b64('/w/a'), value: b64('x'), mod_revision: '4' } }] } })}\n`);
    });
    const api = new GatewayEtcdApi([url], { username: 'u', password: 'p' });
    const calls: string[] = [];
    try {
      await new Promise<void>((resolve) => {
        api.watch('/w/', 3, {
          onEvent: (type, kv) => { calls.push(`${type} ${kv.key}`); resolve(); },
          onReconnected: () => calls.push('reconnected'),
          onError: (e) => calls.push(`error ${/invalid auth token/.test(e.message) ? 'token' : e.message}`),
          onCanceled: (e) => { calls.push(`canceled ${e.message}`); resolve(); },
        });
      });
      assert.deepEqual(calls, ['error token', 'reconnected', 'put /w/a']);
      assert.deepEqual(auths, ['tok1', 'tok2']);
    } finally {
      api.close();
    }
  });

  void it('sends a call again, once, when the kept-alive connection it went out on was reset by the server', async () => {
    // Raw TCP: answers the first request of a connection (keep-alive), resets it at the second.
    let conns = 0;
    const tcp = createTcpServer((sock) => {
      conns++;
      let requests = 0;
      sock.on('data', () => {
        if (++requests > 1) { sock.resetAndDestroy(); return; }
        const body = JSON.stringify({ header: { revision: String(conns) } });
        sock.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`);
      });
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const api = new GatewayEtcdApi([`http://127.0.0.1:${(tcp.address() as AddressInfo).port}`]);
    try {
      assert.equal((await api.list('/p/')).revision, 1);
      assert.equal((await api.list('/p/')).revision, 2, 'the second call is answered on a new connection');
      assert.equal(conns, 2);
    } finally {
      api.close();
      tcp.close();
    }
  });
});
