// Streaming calls over etcd's JSON gateway, in weftd's netns: the gateway answers a gRPC stream
// (POST /v3/watch, /v3/lease/keepalive) with a chunked body of JSON objects, {"result": ...} or
// {"error": ...}, cut anywhere by the transport. The watch keeps one such stream per prefix and
// resumes it after a break from the last seen revision + 1 with a capped back-off (100 ms, doubling
// to 2 s), then tells the store to re-list; etcd canceling it (compaction) ends it.
import type { ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { EtcdWatch, EtcdWatchHandlers } from './api.ts';
import { GatewayHttpError, type GatewayTransport, networkErrorText } from './gateway.ts';
import { type GatewayJson, b64, int64, isInvalidTokenError, parseGatewayError, parseGatewayKv, prefixRangeEnd } from './gateway-json.ts';

/** Splits a stream of concatenated JSON objects (whitespace between them allowed) at any chunk boundary. */
export class JsonObjectSplitter {
  private pending = '';
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** Feeds text; returns the objects it completes (throws when one is not JSON). */
  push(text: string): GatewayJson[] {
    const out: GatewayJson[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true; // backslash
        else if (c === 0x22) this.inString = false;
        continue;
      }
      if (this.depth === 0 && this.pending === '' && i === start && (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) { start = i + 1; continue; }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth++;
      else if ((c === 0x7d || c === 0x5d) && --this.depth === 0) {
        const json = this.pending + text.slice(start, i + 1);
        this.pending = '';
        start = i + 1;
        out.push(JSON.parse(json) as GatewayJson);
      }
    }
    if (start < text.length) this.pending += text.slice(start);
    return out;
  }
}

/** Handlers of one gateway stream. */
export interface GatewayStreamHandlers {
  onObject(j: GatewayJson): void;
  /** The stream ended or broke (err), or etcd refused it (a GatewayHttpError). Not called after destroy(). */
  onEnd(err: Error | undefined): void;
}

/** Opens a streaming call with one request object (the request body ends after it: etcd keeps the stream open). */
export function openGatewayStream(t: GatewayTransport, endpoint: string, path: string, body: unknown, token: string | undefined, h: GatewayStreamHandlers): ClientRequest {
  let ended = false;
  const end = (err: Error | undefined): void => { if (!ended) { ended = true; h.onEnd(err); } };
  const req = t.request(endpoint, path, body, token, false, (res) => {
    res.setEncoding('utf8');
    if (res.statusCode !== 200) {
      let text = '';
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => end(new GatewayHttpError(`etcd ${endpoint}: ${parseGatewayError(text)} (HTTP ${String(res.statusCode)})`, res.statusCode ?? 0)));
      return;
    }
    const split = new JsonObjectSplitter();
    res.on('data', (c: string) => {
      let objs: GatewayJson[];
      try { objs = split.push(c); } catch (e) { req.destroy(); end(new Error(`etcd ${endpoint}: ${path}: stream is not JSON`, { cause: e })); return; }
      for (const o of objs) if (!ended && !req.destroyed) h.onObject(o);
    });
    res.on('end', () => end(new Error(`etcd ${endpoint}: ${path}: stream ended`)));
    res.on('error', (e) => end(e));
  });
  req.on('error', (e) => end(new Error(`etcd ${endpoint}: ${networkErrorText(e)}`, { cause: e })));
  req.on('close', () => end(new Error(`etcd ${endpoint}: ${path}: connection closed`)));
  return req;
}

/** The error an {"error": ...} stream object carries, or undefined for a result. */
export function streamError(j: GatewayJson): string | undefined {
  if (j['error'] === undefined) return undefined;
  return parseGatewayError(JSON.stringify(j));
}

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 2000;

/** One prefix watch over the gateway; see the module comment and EtcdWatchHandlers. */
export class GatewayWatch implements EtcdWatch {
  private req: ClientRequest | undefined;
  private timer: NodeJS.Timeout | undefined;
  private backoff = BACKOFF_MIN_MS;
  private broke = false;
  private done = false;

  constructor(private readonly t: GatewayTransport, private readonly prefix: string, private nextRev: number,
    private readonly h: EtcdWatchHandlers, private readonly onDone: () => void) {}

  /** Opens the stream (again after a break). */
  start(): void {
    if (this.done) return;
    const endpoint = this.t.endpoint();
    const authed = this.t.authToken(endpoint) ?? Promise.resolve(undefined);
    authed.then((token) => {
      if (this.done) return;
      const create = { key: b64(this.prefix), range_end: b64(Buffer.from(prefixRangeEnd(this.prefix), 'latin1')), start_revision: String(this.nextRev) };
      const req = openGatewayStream(this.t, endpoint, 'v3/watch', { create_request: create }, token, {
        onObject: (j) => this.onObject(j, endpoint, token),
        onEnd: (err) => { if (this.req === req) this.broken(err ?? new Error('stream ended'), endpoint, token); },
      });
      // An etcd that vanished without closing the connection is noticed by TCP keep-alive probes.
      req.on('socket', (s: Socket) => s.setKeepAlive(true, 10_000));
      this.req = req;
    }, (err: unknown) => this.broken(err as Error, endpoint, undefined));
  }

  private onObject(j: GatewayJson, endpoint: string, token: string | undefined): void {
    const err = streamError(j);
    if (err !== undefined) { this.broken(new Error(err), endpoint, token); return; }
    const r = (j['result'] ?? {}) as GatewayJson;
    // Created and canceled in one answer (a refused token) is no success: the back-off keeps growing.
    if (r['created'] === true && r['canceled'] !== true) {
      this.backoff = BACKOFF_MIN_MS;
      if (this.broke) { this.broke = false; this.h.onReconnected(); }
    }
    if (r['canceled'] === true) {
      const compact = int64(r['compact_revision']);
      const reason = typeof r['cancel_reason'] === 'string' ? r['cancel_reason'] : '';
      // A refused token ends the watch at creation: authenticate again and resume.
      if (compact === '0' && (isInvalidTokenError(reason) || /permission denied/.test(reason))) { this.broken(new Error(reason), endpoint, token); return; }
      this.finish();
      this.h.onCanceled(new Error(compact !== '0' ? `start revision ${String(this.nextRev)} compacted (etcd keeps from ${compact})` : `canceled by etcd${reason ? `: ${reason}` : ''}`));
      return;
    }
    for (const ev of (r['events'] as GatewayJson[] | undefined) ?? []) {
      if (this.done) return;
      const kv = parseGatewayKv((ev['kv'] ?? {}) as GatewayJson);
      this.nextRev = Math.max(this.nextRev, Number(kv.modRevision) + 1);
      // PUT is the enum's zero: the gateway leaves `type` out for it.
      this.h.onEvent(ev['type'] === 'DELETE' ? 'delete' : 'put', kv);
    }
  }

  private broken(err: Error, endpoint: string, token: string | undefined): void {
    if (this.done) return;
    const req = this.req;
    this.req = undefined;
    req?.destroy();
    if (isInvalidTokenError(err.message) || /permission denied/.test(err.message)) this.t.dropToken(token);
    else if (!(err instanceof GatewayHttpError)) this.t.failover(endpoint);
    const wait = this.backoff;
    this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX_MS);
    // The first failure of an outage is reported; the retries every 2 s are not.
    if (!this.broke) this.h.onError(new Error(`etcd watch of ${this.prefix}: ${err.message}; resuming from revision ${String(this.nextRev)}, retrying every ${String(BACKOFF_MAX_MS)} ms at most`, { cause: err }));
    this.broke = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.start(), wait);
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    const req = this.req;
    this.req = undefined;
    req?.destroy();
    this.onDone();
  }

  /** Stops the watch (no handler is called afterwards). */
  cancel(): void {
    this.finish();
  }
}
