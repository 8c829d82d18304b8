// Renders the delegate config from subnet.env as flannel's CNI plugin does: bridge + host-local,
// isGateway, ipMasq = !FLANNEL_IPMASQ (weftd masquerades when it is true), mtu = FLANNEL_MTU,
// the node subnet as the only range and a route to the cluster Network. Unlike flannel, a bridge
// delegate also gets weftMasqExempt = the cluster Network(s): pod-to-pod traffic is never masqueraded.
import { networkForm, type SubnetEnv } from '../flannel/subnet-env.ts';
import type { FlannelConfig } from './config.ts';
import { clusterNetworks, renderIpam } from './ipam.ts';
import type { FlannelEnv } from '../flannel/subnet-file.ts';

/** The delegate's type when the config names none (flannel's default). */
export const DEFAULT_DELEGATE = 'bridge';

/** FLANNEL_SUBNET ("10.244.3.1/24", the gateway form) -> the node subnet ("10.244.3.0/24"). */
export function nodeSubnet(env: SubnetEnv): string {
  const net = networkForm(env.subnet);
  if (net === null) throw new Error(`FLANNEL_SUBNET ${env.subnet} is not an IPv4 prefix`);
  return net;
}

/** The delegate network config (a JSON object) for one invocation; keys set in `delegate` win, as in flannel. */
export function renderDelegate(cfg: FlannelConfig, env: FlannelEnv): Record<string, unknown> {
  const d: Record<string, unknown> = { ...cfg.delegate };
  d['name'] = cfg.name;
  if (cfg.cniVersion !== '') d['cniVersion'] = cfg.cniVersion;
  if (d['type'] === undefined) d['type'] = DEFAULT_DELEGATE;
  if (d['ipMasq'] === undefined) d['ipMasq'] = !env.ipMasq;
  if (d['mtu'] === undefined) d['mtu'] = env.mtu;
  if (d['type'] === 'bridge' && d['isGateway'] === undefined) d['isGateway'] = true;
  if (d['type'] === 'bridge' && d['weftMasqExempt'] === undefined) d['weftMasqExempt'] = clusterNetworks(env);
  d['ipam'] = renderIpam(cfg, env);
  // Runtime-injected capability values belong to the delegate (portMappings are for portmap, but
  // ips/mac/bandwidth reach bridge and host-local this way, as with flannel).
  for (const k of ['runtimeConfig', 'args'] as const) if (cfg.raw[k] !== undefined) d[k] = cfg.raw[k];
  return d;
}
