// An nf_tables netlink socket bound in another netns (weftd's table owner, a test's namespace): the
// socket stays in the netns it was opened in, so the caller's thread enters it only for the open.
// Apart from socket.ts so that plugins, which never need it, do not load lib/netns for it.
import { openNetns, withNetns } from '../../netns/index.ts';
import { NfnlSocket } from './socket.ts';

/** Opens a socket in the netns at `netnsPath` (a /run/netns or /proc path), or in the caller's when undefined. */
export function openNfnlSocketIn(netnsPath: string | undefined): NfnlSocket {
  if (netnsPath === undefined) return NfnlSocket.open();
  const h = openNetns(netnsPath);
  try {
    return withNetns(h, () => NfnlSocket.open());
  } finally {
    h.close();
  }
}
