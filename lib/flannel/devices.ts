// The node-side device names of the flannel contract, as flannel itself names them, so that weftd
// and the flannel plugins (and flannel's own tools) agree on them. Names only: no syscalls here.

/** The udp backend's TUN device (flannel's name). */
export const UDP_TUN_NAME = 'flannel0';

/** The vxlan backend's VTEP for a VNI: flannel.<VNI>. */
export function vtepName(vni: number): string {
  return `flannel.${vni}`;
}
