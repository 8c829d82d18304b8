// Renders the delegate config from subnet.env as flannel's CNI plugin does: bridge + host-local,
// isGateway, ipMasq = !FLANNEL_IPMASQ (weftd masquerades when it is true), mtu = FLANNEL_MTU,
// the node subnet as the only range and a route to the cluster Network.
import type { FlannelConfig } from './config.ts';
import { renderIpam } from './ipam.ts';
import type { FlannelEnv } from '../../lib/flannel/subnet-file.ts';

/** The delegate's type when the config names none (flannel's default). */
export const DEFAULT_DELEGATE = 'bridge';

/** The delegate network config (a JSON object) for one invocation; keys set in `delegate` win, as in flannel. */
export function renderDelegate(cfg: FlannelConfig, env: FlannelEnv): Record<string, unknown> {
  const d: Record<string, unknown> = { ...cfg.delegate };
  d['name'] = cfg.name;
  if (cfg.cniVersion !== '') d['cniVersion'] = cfg.cniVersion;
  if (d['type'] === undefined) d['type'] = DEFAULT_DELEGATE;
  if (d['ipMasq'] === undefined) d['ipMasq'] = !env.ipMasq;
  if (d['mtu'] === undefined) d['mtu'] = env.mtu;
  if (d['type'] === 'bridge' && d['isGateway'] === undefined) d['isGateway'] = true;
  d['ipam'] = renderIpam(cfg, env);
  // Runtime-injected capability values belong to the delegate (portMappings are for portmap, but
  // ips/mac/bandwidth reach bridge and host-local this way, as with flannel).
  for (const k of ['runtimeConfig', 'args'] as const) if (cfg.raw[k] !== undefined) d[k] = cfg.raw[k];
  return d;
}
