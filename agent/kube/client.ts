// A lean Kubernetes API client for weftd (runs in weftd's netns): JSON requests and a streaming
// watch over node:https with one keep-alive agent. Just what the subnet manager needs (get, list,
// strategic-merge PATCH, watch); docs/weftd-kube.md says why not @kubernetes/client-node.
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { KubeConn } from './config.ts';

/** An API answer: status code and the decoded JSON body (null when empty or not JSON). */
export interface KubeResponse {
  status: number;
  body: unknown;
}

/** An API error with the server's status code and Status message. */
export class KubeApiError extends Error {
  constructor(readonly status: number, method: string, path: string, body: unknown) {
    const msg = (body as { message?: unknown } | null)?.message;
    super(`kube API ${method} ${path}: ${status}${typeof msg === 'string' ? ` ${msg}` : ''}`);
    this.name = 'KubeApiError';
  }
}

/** How a watch stream ended: normally (server timeout, connection closed) or with an error. */
export interface WatchEnd {
  error?: Error;
}

/** A running watch request. */
export interface KubeWatch {
  done: Promise<WatchEnd>;
  abort(): void;
}

/** The client; one per store. */
export class KubeClient {
  private readonly url: URL;
  private readonly agent: http.Agent;
  private readonly mod: typeof http | typeof https;

  constructor(private readonly conn: KubeConn, private readonly timeoutMs = 10_000) {
    this.url = new URL(conn.server);
    const tls = this.url.protocol === 'https:';
    this.mod = tls ? https : http;
    this.agent = tls
      ? new https.Agent({ keepAlive: true, ...(conn.ca ? { ca: conn.ca } : {}), ...(conn.cert ? { cert: conn.cert } : {}), ...(conn.key ? { key: conn.key } : {}), rejectUnauthorized: conn.insecureSkipTlsVerify !== true })
      : new http.Agent({ keepAlive: true });
  }

  private options(method: string, path: string, headers: Record<string, string>): https.RequestOptions {
    const token = this.conn.tokenFile !== undefined ? readFileSync(this.conn.tokenFile, 'utf8').trim() : this.conn.token;
    const base = this.url.pathname.replace(/\/+$/, '');
    return {
      method, agent: this.agent, hostname: this.url.hostname.replace(/^\[|\]$/g, ''), port: this.url.port || (this.mod === https ? 443 : 80),
      path: base + path, headers: { Accept: 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
    };
  }

  /**
   * One request; resolves with any status (callers check), rejects on network errors and timeouts.
   * Sent once more on a new connection when the server had closed the kept-alive one it went out on
   * (see staleSocket).
   */
  request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<KubeResponse> {
    return this.requestOnce(method, path, body, contentType).catch((e: unknown) => {
      if (!staleSocket(e)) throw e;
      return this.requestOnce(method, path, body, contentType);
    });
  }

  private requestOnce(method: string, path: string, body: unknown, contentType: string): Promise<KubeResponse> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      let answered = false;
      const req = this.mod.request(this.options(method, path, data ? { 'Content-Type': contentType, 'Content-Length': String(data.length) } : {}), (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: parseJson(text) });
        });
        res.on('error', reject);
      });
      req.setTimeout(this.timeoutMs, () => req.destroy(new Error(`kube API ${method} ${path}: no answer in ${this.timeoutMs} ms`)));
      req.on('error', (e) => reject(req.reusedSocket && !answered ? markReused(e) : e));
      req.end(data);
    });
  }

  /** A request that must answer 2xx; returns the body. */
  async call(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
    const res = await this.request(method, path, body, contentType);
    if (res.status < 200 || res.status > 299) throw new KubeApiError(res.status, method, path, res.body);
    return res.body;
  }

  /**
   * Streams a watch (one JSON event per line) to onEvent until the server ends it or abort(). With
   * idleMs, a connection silent for that long ends with an error: a peer gone without a FIN or RST
   * (a partition, a load balancer failing over) would otherwise hold a dead watch for as long as TCP
   * keep-alive takes to notice, and no event would arrive meanwhile.
   */
  watch(path: string, onEvent: (ev: unknown) => void, idleMs?: number): KubeWatch {
    let current = this.watchOnce(path, onEvent, idleMs);
    let aborted = false;
    const done = current.done.then((end) => {
      // A watch that died with no answer on a stale kept-alive connection is opened again at once:
      // otherwise the informer would take it for a broken watch and re-list everything.
      if (aborted || !staleSocket(end.error)) return end;
      current = this.watchOnce(path, onEvent, idleMs);
      return current.done;
    });
    return { done, abort: () => { aborted = true; current.abort(); } };
  }

  private watchOnce(path: string, onEvent: (ev: unknown) => void, idleMs?: number): KubeWatch {
    let req: http.ClientRequest | undefined;
    let aborted = false;
    let answered = false;
    const done = new Promise<WatchEnd>((resolve) => {
      req = this.mod.request(this.options('GET', path, {}), (res) => {
        answered = true;
        if (res.statusCode !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            resolve({ error: new KubeApiError(res.statusCode ?? 0, 'GET', path, parseJson(Buffer.concat(chunks).toString('utf8'))) });
          });
          return;
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          buf += c;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line) onEvent(JSON.parse(line));
          }
        });
        res.on('end', () => resolve({}));
        res.on('error', (e) => resolve(aborted ? {} : { error: e }));
        res.on('close', () => resolve(aborted ? {} : { error: new Error('kube API watch: connection closed') }));
      });
      req.on('error', (e) => resolve(aborted ? {} : { error: req?.reusedSocket === true && !answered ? markReused(e) : e }));
      if (idleMs !== undefined) req.setTimeout(idleMs, () => req?.destroy(new Error(`kube API watch: nothing received for ${idleMs} ms`)));
      req.end();
    });
    return { done, abort: () => { aborted = true; req?.destroy(); } };
  }

  /** Closes idle connections. */
  close(): void {
    this.agent.destroy();
  }
}

const REUSED = Symbol('sent on a reused connection');

/** Tags an error of a request that went out on a kept-alive connection, for staleSocket. */
function markReused(e: Error): Error {
  return Object.assign(e, { [REUSED]: true });
}

/**
 * Whether a request failed because the server had already closed the idle kept-alive connection it
 * was written to (ECONNRESET before any answer, on a reused socket): the server never read it, so
 * sending it again on a new connection is safe. Node's http documentation names this race.
 */
function staleSocket(e: unknown): boolean {
  return e instanceof Error && (e as Error & { [REUSED]?: boolean })[REUSED] === true && (e as NodeJS.ErrnoException).code === 'ECONNRESET';
}

/** JSON body or null (empty, or not JSON such as a proxy's HTML error page). */
function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) as unknown : null;
  } catch {
    return null;
  }
}
