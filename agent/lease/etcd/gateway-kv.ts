// The etcd store's operations over the JSON gateway (EtcdApi): range, put/delete in a txn, lease
// grant/keep-alive/revoke, and the watch (gateway-watch.ts). Runs in weftd's netns. The
// gateway marshals protobuf with default values left out, so an absent field is its zero: no
// `succeeded` is false, no `kvs` is none, no `TTL` is 0, no `lease` is "0".
import type { EtcdApi, EtcdKeyValue, EtcdWatch, EtcdWatchHandlers } from './api.ts';
import type { EtcdSecurity } from './client.ts';
import { GatewayHttpError, GatewayTransport } from './gateway.ts';
import { type GatewayJson, b64, formatTxn, headerRevision, int64, isInvalidTokenError, parseGatewayKv, prefixRangeEnd } from './gateway-json.ts';
import { GatewayWatch, openGatewayStream, streamError } from './gateway-watch.ts';

/** EtcdApi over etcd's JSON gateway. */
export class GatewayEtcdApi implements EtcdApi {
  private readonly t: GatewayTransport;
  private readonly watches = new Set<GatewayWatch>();

  constructor(endpoints: readonly string[], sec: EtcdSecurity = {}, timeoutMs = 5000) {
    this.t = new GatewayTransport(endpoints, sec, timeoutMs);
  }

  async get(key: string): Promise<{ kv: EtcdKeyValue | undefined; revision: number }> {
    const r = await this.t.call('v3/kv/range', { key: b64(key) });
    const kv = (r['kvs'] as GatewayJson[] | undefined)?.[0];
    return { kv: kv === undefined ? undefined : parseGatewayKv(kv), revision: headerRevision(r) };
  }

  async list(prefix: string): Promise<{ kvs: EtcdKeyValue[]; revision: number }> {
    const r = await this.t.call('v3/kv/range', { key: b64(prefix), range_end: b64(Buffer.from(prefixRangeEnd(prefix), 'latin1')) });
    return { kvs: ((r['kvs'] as GatewayJson[] | undefined) ?? []).map(parseGatewayKv), revision: headerRevision(r) };
  }

  async delete(key: string): Promise<void> {
    await this.t.call('v3/kv/deleterange', { key: b64(key) });
  }

  async putIf(key: string, cmp: 'create' | 'mod', revision: string, value: string, lease: string): Promise<{ succeeded: boolean; revision: number }> {
    const r = await this.t.call('v3/kv/txn', formatTxn(key, cmp, revision, { request_put: { key: b64(key), value: b64(value), lease } }));
    return { succeeded: r['succeeded'] === true, revision: headerRevision(r) };
  }

  async deleteIf(key: string, modRevision: string): Promise<boolean> {
    const r = await this.t.call('v3/kv/txn', formatTxn(key, 'mod', modRevision, { request_delete_range: { key: b64(key) } }));
    return r['succeeded'] === true;
  }

  async leaseGrant(ttlSeconds: number): Promise<{ id: string; ttl: number }> {
    const r = await this.t.call('v3/lease/grant', { TTL: String(ttlSeconds) });
    if (typeof r['error'] === 'string' && r['error'] !== '') throw new Error(`etcd lease grant: ${r['error']}`);
    const id = int64(r['ID']);
    if (id === '0') throw new Error('etcd lease grant: no lease ID in the answer');
    return { id, ttl: Number(int64(r['TTL'])) };
  }

  /** POST /v3/lease/keepalive is a stream: one request object sent, the first result read, closed. A refused token is renewed once. */
  async leaseKeepAlive(id: string): Promise<number> {
    const endpoint = this.t.endpoint();
    let token = await this.t.authToken(endpoint);
    for (let retried = false; ; retried = true) {
      try {
        return await this.keepAliveOnce(endpoint, id, token);
      } catch (err) {
        if (isInvalidTokenError((err as Error).message) && !retried && token !== undefined) {
          this.t.dropToken(token);
          token = await this.t.authToken(endpoint);
          continue;
        }
        // No answer: the next call goes to the next endpoint.
        if (!(err instanceof GatewayHttpError) && !isInvalidTokenError((err as Error).message)) this.t.failover(endpoint);
        throw err;
      }
    }
  }

  private keepAliveOnce(endpoint: string, id: string, token: string | undefined): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const req = openGatewayStream(this.t, endpoint, 'v3/lease/keepalive', { ID: id }, token, {
        onObject: (j) => {
          clearTimeout(timer);
          req.destroy();
          const err = streamError(j);
          if (err !== undefined) reject(new Error(`etcd ${endpoint}: keep-alive: ${err}`));
          else resolve(Math.max(0, Number(int64(((j['result'] ?? {}) as GatewayJson)['TTL']))));
        },
        onEnd: (err) => { clearTimeout(timer); reject(err ?? new Error(`etcd ${endpoint}: keep-alive stream ended without an answer`)); },
      });
      const timer = setTimeout(() => { req.destroy(); reject(new Error(`etcd ${endpoint}: keep-alive: no answer in ${String(this.t.timeoutMs)} ms`)); }, this.t.timeoutMs);
    });
  }

  async leaseRevoke(id: string): Promise<void> {
    try {
      await this.t.call('v3/lease/revoke', { ID: id });
    } catch {
      // Already gone, or etcd unreachable: the TTL cleans up.
    }
  }

  watch(prefix: string, fromRevision: number, h: EtcdWatchHandlers): EtcdWatch {
    const w = new GatewayWatch(this.t, prefix, fromRevision, h, () => this.watches.delete(w));
    this.watches.add(w);
    w.start();
    return w;
  }

  close(): void {
    for (const w of this.watches) w.cancel();
    this.t.close();
  }
}
