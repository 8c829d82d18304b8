// etcd v3 over its JSON gateway (the grpc-gateway on the client URL, etcd 3.4+): HTTP/1.1 with
// node:http/https in the calling process's netns, one endpoint at a time (the next of the list
// when one fails), keep-alive connections, a deadline on every unary call, and the auth token
// (POST /v3/auth/authenticate, sent as the Authorization header) asked again once when etcd says
// it is invalid (simple tokens expire after --auth-token-ttl, 300 s by default, without use).
// The transport of weftd's etcd store (gateway-kv.ts, gateway-watch.ts; the wire format
// in gateway-json.ts) and `weft doctor`'s reader (EtcdGateway below, also weftd's early look
// at the lease table).
import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import { type EtcdSecurity, readEtcdTlsFiles } from './client.ts';
import { type GatewayJson, b64, isInvalidTokenError, parseGatewayError, prefixRangeEnd, unb64 } from './gateway-json.ts';

export { prefixRangeEnd } from './gateway-json.ts';

/** One line for a connection failure; OpenSSL's multi-part text becomes its reason, and a refused handshake says what etcd wants. */
export function networkErrorText(e: Error & { reason?: unknown; code?: unknown }): string {
  if (typeof e.code !== 'string' || !e.code.startsWith('ERR_SSL')) return e.message;
  const reason = typeof e.reason === 'string' ? e.reason : e.message;
  if (/alert (bad|unknown) certificate|certificate required/.test(reason)) return `etcd refused the TLS handshake (${reason}): it wants a client certificate signed by its CA (--etcd-certfile, --etcd-keyfile)`;
  return `TLS: ${reason}`;
}

/** An error etcd answered (HTTP status other than 200); network failures are plain Errors. */
export class GatewayHttpError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
    this.name = 'GatewayHttpError';
  }
}

/** A request sent on a kept-alive connection that the server had closed (retried once). */
class StaleSocketError extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}

/** HTTP transport with failover and auth; see the module comment. */
export class GatewayTransport {
  private readonly tls: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  private readonly agent: Agent;
  private token: Promise<string> | undefined;
  private tokenValue: string | undefined;
  private current = 0;

  constructor(readonly endpoints: readonly string[], private readonly sec: EtcdSecurity = {}, readonly timeoutMs = 5000) {
    for (const e of endpoints) {
      if (!/^https?:\/\/[^/]+\/?$/.test(e)) throw new Error(`--etcd-endpoints: ${JSON.stringify(e)} is not a URL such as http://127.0.0.1:2379`);
    }
    this.tls = readEtcdTlsFiles(sec);
    // Idle connections close after 15 s on our side: a reused one that etcd closed meanwhile fails once.
    const agentOpts = { keepAlive: true, maxSockets: 4, timeout: 15_000 };
    // node:https (tls, and crypto's OpenSSL state) is loaded only for https endpoints: ~1 MiB of RSS.
    this.agent = endpoints.some((e) => e.startsWith('https:')) ? new (process.getBuiltinModule('node:https').Agent)({ ...agentOpts, ...this.tls }) : new (process.getBuiltinModule('node:http').Agent)(agentOpts);
  }

  /** Starts a POST of `body` to `path` on `endpoint`; the caller reads the response. `pooled`: over the keep-alive agent. */
  request(endpoint: string, path: string, body: unknown, token: string | undefined, pooled: boolean, onRes: (res: IncomingMessage) => void): ClientRequest {
    const url = new URL(path, endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
    const data = JSON.stringify(body);
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...(token !== undefined ? { authorization: token } : {}) };
    const opts = { method: 'POST', headers, agent: pooled ? this.agent : false };
    const req = url.protocol === 'https:' ? process.getBuiltinModule('node:https').request(url, { ...opts, ...this.tls }, onRes) : process.getBuiltinModule('node:http').request(url, opts, onRes);
    req.end(data);
    return req;
  }

  /** One unary call to one endpoint: the decoded answer, or an error naming the endpoint. */
  private async unary(endpoint: string, path: string, body: unknown, token: string | undefined): Promise<GatewayJson> {
    try {
      return await this.unaryOnce(endpoint, path, body, token);
    } catch (err) {
      // A kept-alive connection etcd had closed meanwhile: the request never reached it, send it again.
      if (!(err instanceof StaleSocketError)) throw err;
      return this.unaryOnce(endpoint, path, body, token);
    }
  }

  private unaryOnce(endpoint: string, path: string, body: unknown, token: string | undefined): Promise<GatewayJson> {
    return new Promise((resolve, reject) => {
      const fail = (e: Error & { code?: string }): void => {
        clearTimeout(timer);
        if (req.reusedSocket && !answered && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) { reject(new StaleSocketError(e)); return; }
        reject(e.message.startsWith('etcd ') ? e : new Error(`etcd ${endpoint}: ${networkErrorText(e)}`, { cause: e }));
      };
      let answered = false;
      const req = this.request(endpoint, path, body, token, true, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) { reject(new GatewayHttpError(`etcd ${endpoint}: ${parseGatewayError(text)} (HTTP ${String(res.statusCode)})`, res.statusCode ?? 0)); return; }
          try { resolve(JSON.parse(text) as GatewayJson); } catch (e) { reject(new Error(`etcd ${endpoint}: answer is not JSON`, { cause: e })); }
        });
      });
      const timer = setTimeout(() => req.destroy(new Error(`no answer in ${this.timeoutMs} ms`)), this.timeoutMs);
      req.on('error', fail);
    });
  }

  /** The auth token for --etcd-username, asked once and kept until etcd refuses it. */
  authToken(endpoint: string): Promise<string> | undefined {
    const { username, password } = this.sec;
    if (username === undefined) return undefined;
    this.token ??= this.unary(endpoint, 'v3/auth/authenticate', { name: username, password: password ?? '' }, undefined).then((r) => {
      if (typeof r['token'] !== 'string') throw new Error(`etcd ${endpoint}: authenticate returned no token (is auth enabled?)`);
      this.tokenValue = r['token'];
      return r['token'];
    });
    const t = this.token;
    t.catch(() => { if (this.token === t) this.token = undefined; });
    return t;
  }

  /** Forgets `token` (etcd called it invalid): the next call authenticates again. */
  dropToken(token: string | undefined): void {
    if (token === undefined || token !== this.tokenValue) return;
    this.token = undefined;
    this.tokenValue = undefined;
  }

  /** The endpoint to use now, and a way to move past it when it failed. */
  endpoint(): string {
    return this.endpoints[this.current % this.endpoints.length] as string;
  }

  /** Moves to the next endpoint (after a network failure of `failed`). */
  failover(failed: string): void {
    if (this.endpoint() === failed) this.current = (this.current + 1) % this.endpoints.length;
  }

  /** A unary call: each endpoint in turn from the current one; a refused token is renewed once. */
  async call(path: string, body: unknown): Promise<GatewayJson> {
    let last: unknown;
    for (let i = 0; i < this.endpoints.length; i++) {
      const e = this.endpoint();
      try {
        let token = await this.authToken(e);
        try {
          return await this.unary(e, path, body, token);
        } catch (err) {
          if (!(err instanceof GatewayHttpError) || !isInvalidTokenError(err.message) || token === undefined) throw err;
          this.dropToken(token);
          token = await this.authToken(e);
          return await this.unary(e, path, body, token);
        }
      } catch (err) {
        // etcd answered: another member would answer the same, unless this one is unavailable
        // (503: no leader, stopping). No answer: try the next one.
        if (err instanceof GatewayHttpError && err.status !== 503) throw err;
        last = err;
        this.failover(e);
      }
    }
    throw last instanceof Error ? last : new Error(String(last));
  }

  /** Closes the idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}

/** One key-value as the gateway returns it, decoded. */
export interface EtcdKv {
  key: string;
  value: string;
  /** The etcd lease ID ("0" or absent: none). */
  lease: string;
}

/** A read-only view for `weft doctor` and weftd's early look, over the first endpoint that answers. */
export class EtcdGateway {
  private readonly t: GatewayTransport;

  constructor(endpoints: readonly string[], sec: EtcdSecurity = {}, timeoutMs = 3000) {
    this.t = new GatewayTransport(endpoints, sec, timeoutMs);
  }

  /** The value of `key`, or null when absent. */
  async get(key: string): Promise<string | null> {
    const r = await this.t.call('v3/kv/range', { key: b64(key) });
    const kvs = (r['kvs'] as GatewayJson[] | undefined) ?? [];
    return kvs[0] === undefined ? null : unb64(kvs[0]['value']).toString('utf8');
  }

  /** Every key under `prefix`. */
  async list(prefix: string): Promise<EtcdKv[]> {
    const r = await this.t.call('v3/kv/range', { key: b64(prefix), range_end: b64(Buffer.from(prefixRangeEnd(prefix), 'latin1')) });
    return ((r['kvs'] as GatewayJson[] | undefined) ?? []).map((kv) => ({ key: unb64(kv['key']).toString('utf8'), value: unb64(kv['value']).toString('utf8'), lease: typeof kv['lease'] === 'string' ? kv['lease'] : '0' }));
  }

  /** Seconds left on etcd lease `id`; -1 when it has expired or is unknown. */
  async ttl(id: string): Promise<number> {
    const r = await this.t.call('v3/lease/timetolive', { ID: id });
    const t = Number(r['TTL']);
    return Number.isFinite(t) ? t : -1;
  }
}
