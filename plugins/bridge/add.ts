// ADD: a list of named steps with one rollback path. Config is checked before anything is touched;
// whatever is created afterwards (veth, IPAM lease, set element) is undone in reverse if a later step fails.
import { unsupportedField } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import type { Result } from '../../lib/cni/types.ts';
import { familyOfText } from '../../lib/ip/addr.ts';
import { Rtnl } from '../../lib/netlink/rtnl.ts';
import { ensureBridge, removeBridgeIfUnused, restoreBridge } from './bridge-link.ts';
import { parseBridgeConfig, type BridgeConfig } from './config.ts';
import { ensureForwarding, ensureGatewayAddr, gatewayCidr, pinBridgeMac, removeGatewayAddrIfUnused, restoreForwarding, undoGatewayMove } from './gateway.ts';
import { ipamAdd, ipamDel, ipamValidate } from './ipam.ts';
import { setupMacSpoof, teardownMacSpoof } from './macspoof.ts';
import { setupMasq, teardownMasq } from './masquerade.ts';
import { openPodNs } from '../../lib/pod/netns.ts';
import { configurePodIface } from './pod-iface.ts';
import { waitPortUp } from './port-wait.ts';
import { buildResult, defaultRoutes } from './result.ts';
import { Rollback } from '../../lib/cni/rollback.ts';
import { setupVeth, teardownLinkByName } from './veth.ts';

/** Refuses what this build cannot do yet, before any change (code 2). */
function checkSupported(cfg: BridgeConfig): void {
  // VLAN filtering would need IFLA_BR_VLAN_FILTERING and BRIDGE_VLAN_INFO, which lib/netlink does not encode.
  if (cfg.vlan !== 0) throw unsupportedField('unsupported field: vlan', `vlan ${cfg.vlan}: VLAN filtering is not implemented by weft bridge`);
}

// A delegating plugin (flannel) calls validateAdd, then ADD, with the same decoded config object and
// CNI_ARGS (runDecoded hands it on unchanged): ADD reuses the outcome. Successes only.
const validated = new WeakMap<object, { cniArgs: string; cniVersion: string; cfg: BridgeConfig }>();

/** Every input ADD reads (config, CNI_ARGS, args, runtimeConfig, IPAM's own checks), changing nothing; any netns. */
export async function validateAdd(a: CmdArgs): Promise<BridgeConfig> {
  const seen = validated.get(a.config);
  if (seen !== undefined && seen.cniArgs === a.args && seen.cniVersion === a.cniVersion) return seen.cfg;
  const cfg = parseBridgeConfig(a);
  checkSupported(cfg);
  await ipamValidate(a, cfg); // CNI_ARGS IP=, ranges, requested addresses: refused before the bridge exists
  validated.set(a.config, { cniArgs: a.args, cniVersion: a.cniVersion, cfg });
  return cfg;
}

/** ADD, run in the node netns: bridge, veth, macspoofchk, IPAM, pod addresses and routes, gateway, masquerade, port up. */
export async function cmdAdd(a: CmdArgs): Promise<Result> {
  const cfg = await validateAdd(a);
  const pod = openPodNs(a.netns);
  const host = Rtnl.open();
  try {
    return await new Rollback().run(async (rb) => {
      const br = ensureBridge(host, cfg);
      if (br.created) rb.push(`bridge ${cfg.bridge}`, () => { removeBridgeIfUnused(host, br.link.index); });
      // Unwound last, after the veth: only ports of other pods can keep the bridge as it is now.
      else rb.push(`bridge ${cfg.bridge} settings`, () => { restoreBridge(host, br.link.index, -1, br.changes, cfg.bridge); });
      const veth = setupVeth(host, pod.rtnl, pod.ns, {
        network: cfg.name, containerId: a.containerId, ifName: a.ifName, mtu: cfg.mtu, mac: cfg.mac,
        bridgeIndex: br.link.index, hairpin: cfg.hairpinMode, enableDad: cfg.enableDad,
      }, (hostName) => rb.push(`veth ${hostName}`, () => { teardownLinkByName(host, hostName); }));
      if (cfg.macSpoofChk) {
        // Before the pod has an address: from its first routed frame on, only its own MAC passes the port.
        const spec = { network: cfg.name, containerId: a.containerId, ifName: a.ifName, hostIfName: veth.host.name, podMac: veth.pod.mac };
        rb.push('macspoofchk elements', () => teardownMacSpoof(spec));
        setupMacSpoof(spec);
      }

      const ipam = await ipamAdd(a, cfg);
      rb.push('IPAM lease', () => ipamDel(a, cfg));

      const routes = [...(ipam.routes ?? []), ...(cfg.isDefaultGateway ? defaultRoutes(ipam) : [])];
      const ips = ipam.ips ?? [];
      if (cfg.isGateway) {
        const families = new Set<4 | 6>();
        for (const ip of ips) {
          const gw = gatewayCidr(ip);
          if (gw === undefined) continue;
          families.add(familyOfText(ip.address));
          const onMoved = (old: string): void => rb.push(`bridge address ${old} moved to ${gw}`, () => { undoGatewayMove(host, br.link.index, old, gw); });
          if (ensureGatewayAddr(host, br.link.index, gw, cfg.forceAddress, { bridge: cfg.bridge, ipam: cfg.ipam, containerId: a.containerId, ownPortIndex: veth.host.index, onMoved })) {
            rb.push(`bridge address ${gw}`, () => { removeGatewayAddrIfUnused(host, br.link.index, gw, veth.host.index); });
            pinBridgeMac(host, br.link.index, br.link.mac);
          }
        }
        const forwarding = ensureForwarding(families);
        rb.push('forwarding sysctls', () => { restoreForwarding(host, br.link.index, veth.host.index, forwarding); });
      }
      configurePodIface(pod.rtnl, veth.pod.index, ips, routes, cfg.enableDad);

      if (cfg.ipMasq) {
        const spec = { network: cfg.name, containerId: a.containerId, ifName: a.ifName, podCidrs: ips.map((ip) => ip.address), exempt: cfg.masqExempt };
        rb.push('masquerade element', () => teardownMasq(spec));
        setupMasq(spec);
      }
      await waitPortUp(host, veth.host.index, veth.host.name);

      const bridge = host.getLinkByIndex(br.link.index) ?? br.link;
      return buildResult({ bridge, host: veth.host, pod: veth.pod, netns: a.netns, ipam, routes, dns: cfg.dns });
    });
  } finally {
    host.close();
    pod.close();
  }
}
