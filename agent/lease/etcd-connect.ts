// Opening etcd for the lease store, in weftd's netns: the JSON gateway client by default, the gRPC
// one (a lazy chunk) for a client certificate with password auth, or when etcd refuses the gateway
// a client certificate alone (auth on, the certificate's Common Name as the user); then the first
// read, which proves TLS and credentials before anything is written.
import type { NetConf } from '../config/net-conf.ts';
import type { EtcdApi } from './etcd-api.ts';
import { DEFAULT_ETCD_PREFIX, type EtcdSecurity, etcdKeys, etcdTransportFor, readEtcdNetConf } from './etcd-client.ts';
import { GatewayEtcdApi } from './etcd-gateway-kv.ts';
import { loadEtcdGrpc } from './etcd-grpc-chunk.ts';

/** What connecting needs (a part of the store's options). */
export interface EtcdConnectOptions {
  endpoints: string[];
  prefix?: string;
  netConf?: NetConf;
  security?: EtcdSecurity;
}

/** The etcd client for `opts`: the JSON gateway, or gRPC for a client certificate with password auth (etcdTransportFor). */
export async function openEtcdApi(opts: Pick<EtcdConnectOptions, 'endpoints' | 'security'>, transport = etcdTransportFor(opts.security ?? {})): Promise<EtcdApi> {
  const sec = opts.security ?? {};
  if (transport === 'gateway') return new GatewayEtcdApi(opts.endpoints, sec);
  const { GrpcEtcdApi } = await loadEtcdGrpc();
  return new GrpcEtcdApi(opts.endpoints, sec);
}

/** Opens the client `opts` call for and reads the net-conf (or proves access when it is given); errors in one line naming etcd. */
export async function connectEtcd(opts: EtcdConnectOptions): Promise<{ client: EtcdApi; netConf: NetConf }> {
  let client: EtcdApi | undefined;
  try {
    client = await openEtcdApi(opts);
    let netConf: NetConf;
    try {
      netConf = await firstRead(client, opts);
    } catch (err) {
      // A client certificate alone while etcd has auth on (its Common Name is the user): the
      // gateway refuses it, gRPC takes it.
      if (opts.security?.certfile === undefined || !String((err as Error).message).includes('CommonName of client')) throw err;
      client.close();
      client = await openEtcdApi(opts, 'grpc');
      netConf = await firstRead(client, opts);
    }
    return { client, netConf };
  } catch (err) {
    client?.close();
    // The gateway's errors already name the endpoint that failed.
    const text = etcdErrorText(err);
    throw new Error(text.startsWith('etcd ') ? text : `etcd ${opts.endpoints.join(',')}: ${text}`, { cause: err });
  }
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
