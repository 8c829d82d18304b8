// weftd's --service-proxy flags -> ServiceProxyFlags (validated before anything is written). Pure.
import { parseCidr } from '../../lib/ip/index.ts';

/** The Service proxy's part of WeftdOptions. */
export interface ServiceProxyFlags {
  nodeName: string;
  /** --nodeport-addresses, canonical CIDRs; empty: every local address but loopback. */
  nodePortAddresses: string[];
  kubeconfigFile?: string;
  kubeApiUrl?: string;
}

/** The raw flags this part reads. */
export interface RawServiceProxyFlags {
  serviceProxy?: boolean;
  nodeportAddresses?: string;
  kubeconfigFile?: string;
  kubeApiUrl?: string;
}

/** Validates --service-proxy and --nodeport-addresses (NODE_NAME from the environment, as --kube-subnet-mgr reads it). */
export function normalizeServiceProxyFlags(f: RawServiceProxyFlags, env: NodeJS.ProcessEnv): ServiceProxyFlags | undefined {
  if (f.serviceProxy !== true) {
    if (f.nodeportAddresses !== undefined) throw new Error('--nodeport-addresses needs --service-proxy');
    return undefined;
  }
  const nodeName = env.NODE_NAME ?? '';
  if (nodeName === '') throw new Error('--service-proxy: NODE_NAME is not set (the node\'s name in the API, for externalTrafficPolicy/internalTrafficPolicy Local)');
  const nodePortAddresses = (f.nodeportAddresses ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => {
    const c = parseCidr(s);
    if (c === null) throw new Error(`--nodeport-addresses ${JSON.stringify(s)} is not a CIDR (e.g. 192.0.2.0/24,2001:db8::/64)`);
    return s;
  });
  return {
    nodeName, nodePortAddresses,
    ...(f.kubeconfigFile !== undefined ? { kubeconfigFile: f.kubeconfigFile } : {}),
    ...(f.kubeApiUrl !== undefined ? { kubeApiUrl: f.kubeApiUrl } : {}),
  };
}
