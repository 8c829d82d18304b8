// The node-side device names of the flannel contract, as flannel itself names them, so that weftd
// and the flannel plugins (and flannel's own tools) agree on them. Names only: no syscalls here.

/** The udp backend's TUN device (flannel's name). */
export const UDP_TUN_NAME = 'flannel0';

/** The vxlan backend's VTEP for a VNI: flannel.<VNI>. */
export function vtepName(vni: number): string {
  return `flannel.${vni}`;
}

/** The vxlan backend's VTEP over an IPv6 underlay: flannel-v6.<VNI> (at most 15 bytes, so VNI < 10000). */
export function vtep6Name(vni: number): string {
  return `flannel-v6.${vni}`;
}
