// The one choice between weft's two nftables transports: nf_tables netlink in this process (set
// elements only; well under 1 ms, no process spawned) else `nft -f -` (12-30 ms, a spawned process,
// but it can create tables, chains, sets and rules and run in another netns through nsenter).
import { NftError } from './errors.ts';
import type { NftRunOptions } from './types.ts';

/** True when the netlink path may run: it acts on the calling thread's netns with no custom nft binary. */
export function netlinkUsable(opts: NftRunOptions): boolean {
  return opts.netnsPath === undefined && opts.nftBinary === undefined;
}

/**
 * In the calling thread's netns: runs `viaNetlink` when usable; when it fails for any reason but a
 * refused value (NftError: nft would refuse the value too), or is not usable, runs `viaNft`. The
 * kernel applies an nf_tables batch as a whole or not at all (a missing set is ENOENT for the whole
 * batch), so falling back after a failure never doubles a change.
 */
export function netlinkElseNft(opts: NftRunOptions, viaNetlink: () => void, viaNft: () => void): void {
  if (netlinkUsable(opts)) {
    try {
      viaNetlink();
      return;
    } catch (e) {
      if (e instanceof NftError) throw e;
    }
  }
  viaNft();
}
