// Where and how weftd reaches the Kubernetes API (--kube-subnet-mgr), resolved as flanneld does
// (client-go's BuildConfigFromFlags): a kubeconfig file when given (--kube-api-url then overrides its
// server), else --kube-api-url alone, else the in-cluster service account (KUBERNETES_SERVICE_HOST/
// _PORT, the token and CA under /var/run/secrets/kubernetes.io/serviceaccount). Runs anywhere (no netns).
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { UnsupportedYaml, parseBlockYaml } from './block-yaml.ts';

/** Everything the HTTPS client needs to talk to one API server. */
export interface KubeConn {
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** Bearer token; re-read from tokenFile on each request when that is set (projected tokens rotate). */
  token?: string;
  tokenFile?: string;
  insecureSkipTlsVerify?: boolean;
}

/** The flags that choose the connection. */
export interface KubeConnFlags {
  kubeconfigFile?: string;
  kubeApiUrl?: string;
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Resolves the connection from the flags, the kubeconfig file or the in-cluster environment; throws naming what is missing. */
export async function resolveKubeConn(f: KubeConnFlags, env: NodeJS.ProcessEnv = process.env, saDir = SA_DIR): Promise<KubeConn> {
  if (f.kubeconfigFile !== undefined) {
    const conn = await parseKubeconfig(readFileSync(f.kubeconfigFile, 'utf8'), dirname(f.kubeconfigFile));
    return f.kubeApiUrl !== undefined ? { ...conn, server: f.kubeApiUrl } : conn;
  }
  if (f.kubeApiUrl !== undefined) return { server: f.kubeApiUrl };
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('--kube-subnet-mgr: no --kubeconfig-file or --kube-api-url, and not in a cluster (KUBERNETES_SERVICE_HOST/PORT unset)');
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ca: readFileSync(join(saDir, 'ca.crt')),
    tokenFile: join(saDir, 'token'),
  };
}

type Obj = Record<string, unknown>;

function named(list: unknown, name: unknown, what: string): Obj {
  const hit = Array.isArray(list) ? (list as Obj[]).find((e) => e?.name === name) : undefined;
  if (!hit) throw new Error(`kubeconfig: ${what} ${JSON.stringify(name)} not found`);
  return (hit[what] ?? {}) as Obj;
}

/**
 * The kubeconfig document: JSON, or the block YAML kubeconfig writers produce, read by the small
 * readers; any other YAML by the full library, loaded only then (block-yaml.ts says why).
 */
export async function parseKubeconfigDoc(text: string): Promise<unknown> {
  try {
    return /^\s*\{/.test(text) ? JSON.parse(text) as unknown : parseBlockYaml(text);
  } catch (e) {
    if (!(e instanceof UnsupportedYaml || e instanceof SyntaxError)) throw e;
    const { parse } = await import('yaml');
    return parse(text) as unknown;
  }
}

/** Parses a kubeconfig (YAML or JSON) and returns its current context's connection; relative paths are taken from `baseDir`. */
export async function parseKubeconfig(text: string, baseDir: string): Promise<KubeConn> {
  const doc = await parseKubeconfigDoc(text) as Obj | null;
  if (!doc || typeof doc !== 'object') throw new Error('kubeconfig: not a mapping');
  const ctxName = doc['current-context'];
  const ctx = named(doc.contexts, ctxName, 'context');
  const cluster = named(doc.clusters, ctx.cluster, 'cluster');
  const user = ctx.user !== undefined ? named(doc.users, ctx.user, 'user') : {};
  if (typeof cluster.server !== 'string') throw new Error(`kubeconfig: cluster ${JSON.stringify(ctx.cluster)} has no server`);
  const bytes = (data: unknown, file: unknown): Buffer | undefined => {
    if (typeof data === 'string') return Buffer.from(data, 'base64');
    if (typeof file === 'string') return readFileSync(isAbsolute(file) ? file : join(baseDir, file));
    return undefined;
  };
  const conn: KubeConn = { server: cluster.server };
  const ca = bytes(cluster['certificate-authority-data'], cluster['certificate-authority']);
  const cert = bytes(user['client-certificate-data'], user['client-certificate']);
  const key = bytes(user['client-key-data'], user['client-key']);
  if (ca) conn.ca = ca;
  if (cert) conn.cert = cert;
  if (key) conn.key = key;
  if (typeof user.token === 'string') conn.token = user.token;
  if (typeof user.tokenFile === 'string') conn.tokenFile = isAbsolute(user.tokenFile) ? user.tokenFile : join(baseDir, user.tokenFile);
  if (cluster['insecure-skip-tls-verify'] === true) conn.insecureSkipTlsVerify = true;
  return conn;
}
