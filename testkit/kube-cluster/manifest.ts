// deploy/weft.yaml as objects, for the kit and scripts that apply it changed (weftd --service-proxy
// and --network-policy turned on as deploy/weft.yaml's comments say) or need its image: read from
// the repository, no cluster involved.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** The DaemonSet manifest users apply. */
export const WEFT_MANIFEST = join(import.meta.dirname, '..', '..', 'deploy', 'weft.yaml');

/** Every document of deploy/weft.yaml, in order; throws on a YAML error. */
export function weftManifestObjects(): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const d of parseAllDocuments(readFileSync(WEFT_MANIFEST, 'utf8'))) {
    if (d.errors.length > 0) throw new Error(`deploy/weft.yaml: ${d.errors.map((e) => e.message).join('; ')}`);
    const o = d.toJS() as Record<string, unknown> | null;
    if (o !== null) out.push(o);
  }
  return out;
}

/** The one image the DaemonSet's containers name. */
export function weftManifestImage(): string {
  const ds = weftManifestObjects().find((o) => o['kind'] === 'DaemonSet') as { spec: { template: { spec: { initContainers?: Array<{ image: string }>; containers: Array<{ image: string }> } } } } | undefined;
  if (!ds) throw new Error('deploy/weft.yaml has no DaemonSet');
  const images = new Set([...(ds.spec.template.spec.initContainers ?? []), ...ds.spec.template.spec.containers].map((c) => c.image));
  if (images.size !== 1) throw new Error(`deploy/weft.yaml names ${images.size} images`);
  return [...images][0] as string;
}

/** What to turn on in weftd beyond deploy/weft.yaml's `--kube-subnet-mgr`. */
export interface WeftdFeatures {
  /** weftd --service-proxy (no kube-proxy): needs `apiServer`, the API server's own address. */
  serviceProxy?: boolean;
  networkPolicy?: boolean;
  /** host:port of kube-apiserver, for KUBERNETES_SERVICE_HOST/_PORT (weftd programs the Service it would otherwise dial). */
  apiServer?: { host: string; port: number };
}

/** The read-only rules each feature adds to weft's ClusterRole (docs/services.md, docs/network-policy.md). */
export const FEATURE_RBAC = {
  serviceProxy: [
    { apiGroups: [''], resources: ['services', 'endpoints'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
  ],
  networkPolicy: [
    { apiGroups: [''], resources: ['pods', 'namespaces'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'list', 'watch'] },
  ],
};

/**
 * deploy/weft.yaml with `f` turned on, as a kubectl List (JSON): the ClusterRole gains FEATURE_RBAC's
 * rules, weftd's args the flags, and with --service-proxy weftd's env the API server's own address.
 */
export function weftManifestWith(f: WeftdFeatures): string {
  const objs = weftManifestObjects().map((x) => structuredClone(x)) as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const x of objs) {
    if (x['kind'] === 'ClusterRole') {
      const rules = x['rules'] as unknown[];
      if (f.serviceProxy === true) rules.push(...FEATURE_RBAC.serviceProxy);
      if (f.networkPolicy === true) rules.push(...FEATURE_RBAC.networkPolicy);
    }
    if (x['kind'] === 'DaemonSet') {
      const c = (x['spec']['template']['spec']['containers'] as Array<{ args: string[]; env?: unknown[] }>)[0];
      if (!c) throw new Error('no weftd container');
      if (f.networkPolicy === true) c.args.push('--network-policy');
      if (f.serviceProxy === true) {
        if (!f.apiServer) throw new Error('--service-proxy needs the API server address');
        c.args.push('--service-proxy');
        c.env = [...(c.env ?? []), { name: 'KUBERNETES_SERVICE_HOST', value: f.apiServer.host }, { name: 'KUBERNETES_SERVICE_PORT', value: String(f.apiServer.port) }];
      }
    }
  }
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs });
}
