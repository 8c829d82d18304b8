// The etcd store's operations over etcd's gRPC API with the npm `etcd3` client (grpc-js, http2,
// protobufjs: 10-17 MiB of weftd once loaded), in weftd's netns. Only for what the JSON gateway
// cannot do: a client certificate together with password auth (etcd refuses gateway requests that
// carry a client certificate while auth is on). Loaded through grpc-chunk.ts, so that a weftd
// on the gateway never parses it.
import { Etcd3, type IKeyValue, type IOptions } from 'etcd3';
import type { EtcdApi, EtcdKeyValue, EtcdWatch, EtcdWatchHandlers } from './api.ts';
import { type EtcdSecurity, readEtcdTlsFiles } from './client.ts';

type Backoff = NonNullable<NonNullable<IOptions['faultHandling']>['watchBackoff']>;

/** Doubling back-off capped at maxMs (etcd3's default waits up to 30 s before re-watching). */
function cappedBackoff(ms: number, maxMs: number): Backoff {
  return { duration: ms, next: () => cappedBackoff(Math.min(ms * 2, maxMs), maxMs) };
}

/** The etcd3 options for `sec`: TLS credentials when a CA or a client cert is named, auth when a username is. */
export function etcdSecurityOptions(sec: EtcdSecurity): Pick<IOptions, 'credentials' | 'auth'> {
  const out: Pick<IOptions, 'credentials' | 'auth'> = {};
  if (sec.cafile !== undefined || sec.certfile !== undefined) {
    const tls = readEtcdTlsFiles(sec);
    // grpc's createSsl takes a null root certificate as "the system's roots"; etcd3 types it as a Buffer.
    out.credentials = {
      rootCertificate: (tls.ca ?? null) as Buffer,
      ...(tls.cert !== undefined ? { certChain: tls.cert } : {}),
      ...(tls.key !== undefined ? { privateKey: tls.key } : {}),
    };
  }
  if (sec.username !== undefined) out.auth = { username: sec.username, password: sec.password ?? '' };
  return out;
}

/** Creates an etcd3 client for `--etcd-endpoints` (URLs such as http://10.0.0.1:2379); unary calls time out after callTimeoutMs. */
export function createEtcdClient(endpoints: string[], callTimeoutMs = 5000, security: EtcdSecurity = {}): Etcd3 {
  for (const e of endpoints) {
    if (!/^https?:\/\/[^/]+\/?$/.test(e)) throw new Error(`--etcd-endpoints: ${JSON.stringify(e)} is not a URL such as http://127.0.0.1:2379`);
  }
  return new Etcd3({
    hosts: endpoints,
    ...etcdSecurityOptions(security),
    dialTimeout: callTimeoutMs,
    // Streams (watch, keep-alive) have no deadline; everything else fails fast so that an etcd
    // outage surfaces as errors the store retries, not as calls hanging for minutes.
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + callTimeoutMs }),
    faultHandling: { watchBackoff: cappedBackoff(100, 2000) },
  });
}

const toKv = (kv: IKeyValue): EtcdKeyValue => ({ key: kv.key.toString(), value: kv.value, createRevision: kv.create_revision, modRevision: kv.mod_revision, lease: kv.lease });

/** EtcdApi over gRPC (etcd3). */
export class GrpcEtcdApi implements EtcdApi {
  private readonly c: Etcd3;

  constructor(endpoints: string[], sec: EtcdSecurity = {}, timeoutMs = 5000) {
    this.c = createEtcdClient(endpoints, timeoutMs, sec);
  }

  async get(key: string): Promise<{ kv: EtcdKeyValue | undefined; revision: number }> {
    const r = await this.c.get(key).exec();
    return { kv: r.kvs[0] && toKv(r.kvs[0]), revision: Number(r.header.revision) };
  }

  async list(prefix: string): Promise<{ kvs: EtcdKeyValue[]; revision: number }> {
    const r = await this.c.getAll().prefix(prefix).exec();
    return { kvs: r.kvs.map(toKv), revision: Number(r.header.revision) };
  }

  async delete(key: string): Promise<void> {
    await this.c.delete().key(key).exec();
  }

  async putIf(key: string, cmp: 'create' | 'mod', revision: string, value: string, lease: string): Promise<{ succeeded: boolean; revision: number }> {
    const r = await this.c.if(key, cmp === 'create' ? 'Create' : 'Mod', '==', revision).then(this.c.put(key).value(value).lease(lease)).commit();
    return { succeeded: r.succeeded, revision: Number(r.header.revision) };
  }

  async deleteIf(key: string, modRevision: string): Promise<boolean> {
    return (await this.c.if(key, 'Mod', '==', modRevision).then(this.c.delete().key(key)).commit()).succeeded;
  }

  async leaseGrant(ttlSeconds: number): Promise<{ id: string; ttl: number }> {
    const r = await this.c.leaseClient.leaseGrant({ TTL: ttlSeconds });
    return { id: r.ID, ttl: Number(r.TTL) };
  }

  async leaseKeepAlive(id: string, timeoutMs = 5000): Promise<number> {
    const stream = await this.c.leaseClient.leaseKeepAlive();
    try {
      const res = await new Promise<{ TTL: string }>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('etcd keep-alive timed out')), timeoutMs);
        stream.on('data', (r: { TTL: string }) => { clearTimeout(t); resolve(r); });
        stream.on('error', (e: Error) => { clearTimeout(t); reject(e); });
        stream.write({ ID: id });
      });
      return Math.max(0, Number(res.TTL));
    } finally {
      stream.end();
    }
  }

  async leaseRevoke(id: string): Promise<void> {
    try {
      await this.c.leaseClient.leaseRevoke({ ID: id });
    } catch {
      // Already gone, or etcd unreachable: the TTL cleans up.
    }
  }

  watch(prefix: string, fromRevision: number, h: EtcdWatchHandlers): EtcdWatch {
    let canceled = false;
    let disconnected = false;
    let cancel = (): void => { canceled = true; };
    this.c.watch().prefix(prefix).startRevision(String(fromRevision)).create().then((w) => {
      if (canceled) { void w.cancel().catch(() => undefined); return; }
      cancel = () => { canceled = true; void w.cancel().catch(() => undefined); };
      w.on('put', (kv) => { if (!canceled) h.onEvent('put', toKv(kv)); });
      w.on('delete', (kv) => { if (!canceled) h.onEvent('delete', toKv(kv)); });
      w.on('disconnected', () => { disconnected = true; });
      // After a reconnect, a re-list catches what etcd3's resume cannot (e.g. a wiped etcd).
      w.on('connected', () => { if (disconnected && !canceled) { disconnected = false; h.onReconnected(); } });
      // Typically the start revision was compacted (etcd cancels the watch, 3.4 without a reason).
      w.on('error', (err) => { if (!canceled) { cancel(); h.onCanceled(err); } });
    }, (err: unknown) => {
      if (canceled) return;
      // Not started: the store re-lists and watches again, after a pause so as not to spin.
      setTimeout(() => { if (!canceled) h.onCanceled(new Error(`could not start: ${String(err)}`, { cause: err })); }, 1000).unref();
    });
    return { cancel: () => cancel() };
  }

  close(): void {
    this.c.close();
  }
}
