// The delegate's IPAM section as flannel's CNI plugin assembles it: the configured `ipam` object
// (type defaulting to host-local), `ranges` replaced by one range set per family of the node
// subnet(s), and a route to every cluster network appended to the configured routes.
import { invalidConfig } from '../cni/errors.ts';
import { networkForm } from '../flannel/subnet-env.ts';
import type { FlannelConfig } from './config.ts';
import type { FlannelEnv } from '../flannel/subnet-file.ts';

/** "10.244.3.1/24" (subnet.env's gateway form) -> "10.244.3.0/24"; null when it is not a prefix. */
export const subnetNetwork = networkForm;

function configuredRoutes(ipam: Record<string, unknown>): unknown[] {
  const r = ipam['routes'];
  if (r === undefined || r === null) return [];
  if (!Array.isArray(r)) throw invalidConfig('failed to read IPAM routes: failed to parse ipam.routes', `${JSON.stringify(r)} must be a list`);
  return r as unknown[];
}

/** Every cluster network of subnet.env, IPv4 then IPv6 (canonical CIDRs). */
export function clusterNetworks(env: FlannelEnv): string[] {
  return [...(env.networks ?? (env.network === '' ? [] : [env.network])), ...(env.ipv6Networks ?? [])];
}

/** Pure: the rendered `ipam` object for `env` (dual-stack when subnet.env has the IPv6 keys). */
export function renderIpam(cfg: FlannelConfig, env: FlannelEnv): Record<string, unknown> {
  const ranges: Array<Array<{ subnet: string }>> = [];
  for (const sn of [env.subnet, env.ipv6Subnet]) {
    const net = sn === undefined || sn === '' ? null : subnetNetwork(sn);
    if (net !== null) ranges.push([{ subnet: net }]);
  }
  const networks = clusterNetworks(env);
  return {
    type: 'host-local',
    ...cfg.ipam,
    ranges,
    routes: [...configuredRoutes(cfg.ipam), ...networks.map((dst) => ({ dst }))],
  };
}
