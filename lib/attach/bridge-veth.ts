// The bridge plugin's naming contract for the host end of a pod's veth: the name the creating
// RTM_NEWLINK gives it and the alias (IFLA_IFALIAS) that finds it again, both derived from the
// attachment. The bridge writes them (veth.ts), its DEL and GC find by them, and weft doctor reads
// them to tell live attachments from leaked ones: one definition, so the readers cannot drift.
// Pure: no netns.
import { fnv1a32 } from '../hash/fnv.ts';

/** Every attachment alias starts with this. */
export const ALIAS_PREFIX = 'weft:';
const HOST_VETH_NAME = /^w[0-9a-f]{14}$/;
/** Length of vethNetworkPrefix: `w` + 6 hex. */
const PREFIX_LEN = 7;

/** `w` + 6 hex of the network name's hash: every host veth of network `network` starts with this. */
export function vethNetworkPrefix(network: string): string {
  return `w${fnv1a32(network).slice(0, 6)}`;
}

/** 8 hex of the hash of `<containerID>/<ifname>`: the attachment part of a host veth name. */
export function vethAttachmentPart(containerId: string, ifName: string): string {
  return fnv1a32(`${containerId}/${ifName}`);
}

/**
 * The host veth's name: vethNetworkPrefix + vethAttachmentPart, 15 bytes (IFNAMSIZ 16 minus the NUL,
 * include/uapi/linux/if.h). The name is set by the creating RTM_NEWLINK itself, so from the moment the
 * pair exists GC and DEL can tell its network and attachment; the alias needs a second message, and
 * an ADD killed between the two left a veth nobody could attribute.
 */
export function hostVethName(network: string, containerId: string, ifName: string): string {
  return vethNetworkPrefix(network) + vethAttachmentPart(containerId, ifName);
}

/** Whether `name` has the shape of a hostVethName (of any network). */
export function isHostVethName(name: string): boolean {
  return HOST_VETH_NAME.test(name);
}

/** The attachment part of a hostVethName-shaped `name` (any network), else null. */
export function attachmentPartOf(name: string): string | null {
  return isHostVethName(name) ? name.slice(PREFIX_LEN) : null;
}

/**
 * The host veth's alias (IFLA_IFALIAS): `weft:<containerID>/<ifname>`, so a DEL without CNI_NETNS and
 * without prevResult still finds the pair. Long IDs are hashed to stay under IFALIASZ (256 bytes).
 */
export function attachmentAlias(containerId: string, ifName: string): string {
  const text = `${ALIAS_PREFIX}${containerId}/${ifName}`;
  return text.length <= 200 ? text : `${ALIAS_PREFIX}h${fnv1a32(`${containerId}/${ifName}`)}`;
}

/** Whether `alias` is one attachmentAlias writes. */
export function isAttachmentAlias(alias: string | undefined): alias is string {
  return alias?.startsWith(ALIAS_PREFIX) === true;
}

/** The attachments whose host veth exists, from a node's links: their aliases and name parts. */
export interface LiveAttachments {
  aliases: ReadonlySet<string>;
  nameParts: ReadonlySet<string>;
}

/** Collects the live attachments from the node netns's links (any network's host veths). */
export function liveAttachments(links: ReadonlyArray<{ name: string; alias?: string | undefined }>): LiveAttachments {
  const aliases = new Set<string>();
  const nameParts = new Set<string>();
  for (const l of links) {
    if (isAttachmentAlias(l.alias)) aliases.add(l.alias);
    const part = attachmentPartOf(l.name);
    if (part !== null) nameParts.add(part);
  }
  return { aliases, nameParts };
}

/** Whether attachment `<containerId>/<ifName>` has its host veth among the live ones (by name or by alias). */
export function isLive(live: LiveAttachments, containerId: string, ifName: string): boolean {
  return live.nameParts.has(vethAttachmentPart(containerId, ifName)) || live.aliases.has(attachmentAlias(containerId, ifName));
}
