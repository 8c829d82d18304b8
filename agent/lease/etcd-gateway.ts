// Read-only etcd v3 access through its JSON gateway (POST /v3/kv/range, /v3/lease/timetolive on the
// client URL, etcd 3.4+), with node:http: doctor reads a few keys once, so it carries no gRPC client
// (the etcd3 package would add ~600 kB to every `weft` start-up).
import { request } from 'node:http';

/** One key-value as the gateway returns it, decoded. */
export interface EtcdKv {
  key: string;
  value: string;
  /** The etcd lease ID ("0" or absent: none). */
  lease: string;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: unknown): string => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

/** The range end that selects every key starting with `prefix` (etcd's prefix convention: last byte + 1). */
export function prefixRangeEnd(prefix: string): string {
  const b = Buffer.from(prefix, 'utf8');
  b[b.length - 1] = (b[b.length - 1] ?? 0) + 1;
  return b.toString('latin1');
}

function post(endpoint: string, path: string, body: unknown, timeoutMs: number): Promise<Record<string, unknown>> {
  const url = new URL(path, endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
  if (url.protocol !== 'http:') return Promise.reject(new Error(`${endpoint}: doctor reads etcd over http only`));
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', timeout: timeoutMs, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) { reject(new Error(`${url.href}: HTTP ${String(res.statusCode)} ${text.slice(0, 200)}`)); return; }
        try { resolve(JSON.parse(text) as Record<string, unknown>); } catch (e) { reject(new Error(`${url.href}: not JSON`, { cause: e })); }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${url.href}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(data);
  });
}

/** A reader over the first endpoint that answers. */
export class EtcdGateway {
  constructor(private readonly endpoints: readonly string[], private readonly timeoutMs = 3000) {}

  private async call(path: string, body: unknown): Promise<Record<string, unknown>> {
    let last: unknown;
    for (const e of this.endpoints) {
      try {
        return await post(e, path, body, this.timeoutMs);
      } catch (err) {
        last = err;
      }
    }
    throw last instanceof Error ? last : new Error(String(last));
  }

  /** The value of `key`, or null when absent. */
  async get(key: string): Promise<string | null> {
    const r = await this.call('v3/kv/range', { key: b64(key) });
    const kvs = (r['kvs'] as Array<Record<string, unknown>> | undefined) ?? [];
    return kvs[0] === undefined ? null : unb64(kvs[0]['value']);
  }

  /** Every key under `prefix`. */
  async list(prefix: string): Promise<EtcdKv[]> {
    const r = await this.call('v3/kv/range', { key: b64(prefix), range_end: Buffer.from(prefixRangeEnd(prefix), 'latin1').toString('base64') });
    return ((r['kvs'] as Array<Record<string, unknown>> | undefined) ?? []).map((kv) => ({ key: unb64(kv['key']), value: unb64(kv['value']), lease: typeof kv['lease'] === 'string' ? kv['lease'] : '0' }));
  }

  /** Seconds left on etcd lease `id`; -1 when it has expired or is unknown. */
  async ttl(id: string): Promise<number> {
    const r = await this.call('v3/lease/timetolive', { ID: id });
    const t = Number(r['TTL']);
    return Number.isFinite(t) ? t : -1;
  }
}
