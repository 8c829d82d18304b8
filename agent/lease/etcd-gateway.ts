// Read-only etcd v3 access through its JSON gateway (POST /v3/kv/range, /v3/lease/timetolive on the
// client URL, etcd 3.4+), with node:http/https, in the calling process's netns. For the few reads
// that must not wait for the gRPC client (etcd3, grpc, protobufjs: ~600 kB to load and compile):
// `weft doctor`'s whole lease view, and weftd's early look at the lease table before its store is
// up. Takes weftd's TLS and auth flags: a CA, a client certificate, a user whose token is asked
// once (POST /v3/auth/authenticate) and sent as the Authorization header.
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { EtcdSecurity } from './etcd-client.ts';

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

/** The TLS material of `sec`, read once; a file that cannot be read is named by its flag. */
function tlsOptions(sec: EtcdSecurity): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const read = (flag: string, path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (e) {
      throw new Error(`${flag} ${JSON.stringify(path)}: ${(e as Error).message}`, { cause: e });
    }
  };
  return {
    ...(sec.cafile !== undefined ? { ca: read('--etcd-cafile', sec.cafile) } : {}),
    ...(sec.certfile !== undefined ? { cert: read('--etcd-certfile', sec.certfile) } : {}),
    ...(sec.keyfile !== undefined ? { key: read('--etcd-keyfile', sec.keyfile) } : {}),
  };
}

/** etcd's error text in a gateway error body ({"error": ..., "message": ...}), else the body's start. */
function etcdError(text: string): string {
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const m = j['message'] ?? j['error'];
    // etcd refuses a gateway request carrying a client certificate while auth is on (the CN cannot
    // name the user through the gateway): say what to do instead of only quoting it.
    if (typeof m === 'string' && m.includes('CommonName of client')) return `${m.trim()}: with etcd auth on, the JSON gateway takes no client certificate; read with --etcd-username/--etcd-password and --etcd-cafile only`;
    if (typeof m === 'string') return m.trim();
  } catch {
    // not JSON: show it as it is
  }
  return text.slice(0, 200);
}

/** A reader over the first endpoint that answers. */
export class EtcdGateway {
  private readonly tls: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  private token: Promise<string> | undefined;

  constructor(private readonly endpoints: readonly string[], private readonly sec: EtcdSecurity = {}, private readonly timeoutMs = 3000) {
    this.tls = tlsOptions(sec);
  }

  private post(endpoint: string, path: string, body: unknown, token: string | undefined): Promise<Record<string, unknown>> {
    const url = new URL(path, endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new Error(`${endpoint}: not an http(s) URL`));
    const data = JSON.stringify(body);
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...(token !== undefined ? { authorization: token } : {}) };
    return new Promise((resolve, reject) => {
      const onRes = (res: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) { reject(new Error(`etcd ${endpoint}: ${etcdError(text)} (HTTP ${String(res.statusCode)})`)); return; }
          try { resolve(JSON.parse(text) as Record<string, unknown>); } catch (e) { reject(new Error(`etcd ${endpoint}: answer is not JSON`, { cause: e })); }
        });
      };
      const opts = { method: 'POST', timeout: this.timeoutMs, headers };
      const req = url.protocol === 'https:' ? httpsRequest(url, { ...opts, ...this.tls }, onRes) : httpRequest(url, opts, onRes);
      req.on('timeout', () => req.destroy(new Error(`no answer in ${this.timeoutMs} ms`)));
      req.on('error', (e) => reject(e.message.startsWith('etcd ') ? e : new Error(`etcd ${endpoint}: ${e.message}`, { cause: e })));
      req.end(data);
    });
  }

  /** The auth token for --etcd-username, asked once (etcd answers a bad password with an error). */
  private auth(endpoint: string): Promise<string> | undefined {
    const { username, password } = this.sec;
    if (username === undefined) return undefined;
    this.token ??= this.post(endpoint, 'v3/auth/authenticate', { name: username, password: password ?? '' }, undefined).then((r) => {
      if (typeof r['token'] !== 'string') throw new Error(`etcd ${endpoint}: authenticate returned no token (is auth enabled?)`);
      return r['token'];
    });
    return this.token;
  }

  private async call(path: string, body: unknown): Promise<Record<string, unknown>> {
    let last: unknown;
    for (const e of this.endpoints) {
      try {
        const token = await this.auth(e)?.catch((err: unknown) => { this.token = undefined; throw err; });
        return await this.post(e, path, body, token);
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
