// Opening etcd for the lease store, in weftd's netns: the JSON gateway client by default, the gRPC
// one (a lazy chunk) for a client certificate with password auth, or when etcd's gateway cannot
// serve a client certificate (gatewayCannotServe); then the first read, which proves TLS and
// credentials before anything is written.
import type { NetConf } from '../../config/net-conf.ts';
import type { EtcdApi } from './api.ts';
import { DEFAULT_ETCD_PREFIX, type EtcdSecurity, etcdKeys, etcdTransportFor, readEtcdNetConf } from './client.ts';
import { GatewayHttpError } from './gateway.ts';
import { GatewayEtcdApi } from './gateway-kv.ts';

/** What connecting needs (a part of the store's options). */
export interface EtcdConnectOptions {
  endpoints: string[];
  prefix?: string;
  netConf?: NetConf;
  security?: EtcdSecurity;
  /**
   * Loads the gRPC client (open-store.ts passes grpc-chunk.ts's loader). Given by the caller so
   * that in dist/bin/weftd the gRPC chunk sits beside the etcd store's chunk, not inside it, where
   * its text would stay in the heap of every weftd on etcd.
   */
  loadGrpc?: () => Promise<typeof import('./grpc.ts')>;
}

/** The etcd client for `opts`: the JSON gateway, or gRPC for a client certificate with password auth (etcdTransportFor). */
export async function openEtcdApi(opts: Pick<EtcdConnectOptions, 'endpoints' | 'security' | 'loadGrpc'>, transport = etcdTransportFor(opts.security ?? {})): Promise<EtcdApi> {
  const sec = opts.security ?? {};
  if (transport === 'gateway') return new GatewayEtcdApi(opts.endpoints, sec);
  if (opts.loadGrpc === undefined) throw new Error('a client certificate with etcd auth needs the gRPC etcd client, and none was given');
  const { GrpcEtcdApi } = await opts.loadGrpc();
  return new GrpcEtcdApi(opts.endpoints, sec);
}

/** Opens the client `opts` call for and reads the net-conf (or proves access when it is given); errors in one line naming etcd. */
export async function connectEtcd(opts: EtcdConnectOptions): Promise<{ client: EtcdApi; netConf: NetConf }> {
  // Outside the try: a flag naming a file that cannot be read is the flag's error, not etcd's.
  let client: EtcdApi | undefined = await openEtcdApi(opts);
  try {
    let netConf: NetConf;
    try {
      netConf = await firstRead(client, opts);
    } catch (err) {
      if (!gatewayCannotServe(err, opts.security ?? {})) throw err;
      client.close();
      client = undefined;
      const grpc = await openEtcdApi(opts, 'grpc');
      try {
        netConf = await firstRead(grpc, opts);
      } catch (grpcErr) {
        grpc.close();
        throw new Error(`${(err as Error).message}; over gRPC: ${etcdErrorText(grpcErr)}`, { cause: grpcErr });
      }
      client = grpc;
    }
    return { client, netConf };
  } catch (err) {
    client?.close();
    // The gateway's errors already name the endpoint that failed.
    const text = etcdErrorText(err);
    throw new Error(text.startsWith('etcd ') ? text : `etcd ${opts.endpoints.join(',')}: ${text}`, { cause: err });
  }
}

/**
 * True when etcd answered the gateway but cannot serve a client certificate there, where gRPC can:
 * with auth on it refuses any (400, "CommonName of client ..."; the certificate's Common Name is the
 * user); with client-cert-auth its gateway reaches etcd's own gRPC presenting the server's
 * certificate, which fails (503) when that certificate lacks the clientAuth usage.
 */
function gatewayCannotServe(err: unknown, sec: EtcdSecurity): boolean {
  if (sec.certfile === undefined || !(err instanceof GatewayHttpError)) return false;
  return err.message.includes('CommonName of client') || err.status === 503;
}

/** The net-conf, from etcd unless given; with --net-conf a read still proves credentials and TLS before any write. */
async function firstRead(client: EtcdApi, opts: EtcdConnectOptions): Promise<NetConf> {
  const prefix = opts.prefix ?? DEFAULT_ETCD_PREFIX;
  if (opts.netConf) {
    await client.get(etcdKeys(prefix).config);
    return opts.netConf;
  }
  return readEtcdNetConf(client, prefix);
}

/** One line for an etcd error (grpc's messages can span lines and nest causes). */
function etcdErrorText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error && parts.length < 3; e = e.cause) {
    // grpc-js appends an empty "Resolution note:" to connection errors.
    const m = e.message.replace(/\s+/g, ' ').replace(/ Resolution note:$/, '').trim();
    if (m && !parts.some((p) => p.includes(m))) parts.push(m);
  }
  return parts.join(': ') || String(err);
}
