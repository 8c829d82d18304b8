// Public surface of weft's nftables transports: `nft -f -` batches (one transaction per call), their
// listing, and the in-process nf_tables netlink element path (nfnl/). The rules live with their commands.
export { NftBatch, type NftApplyResult } from './batch.ts';
export { NftError, type NftErrorKind } from './errors.ts';
export { nftExpr, type NftExpr, type NftExprValue } from './expr.ts';
export { findElementsByComment, findRulesByTag, listSet, listTable, type NftListOptions } from './list.ts';
export { parseNftListing } from './parse-listing.ts';
export { findNft, runNft, type NftOutput } from './run.ts';
export { deleteTable, WEFT_BRIDGE_TABLE, WEFT_TABLE, WEFT_TABLE_V4, WEFT_TABLE_V6 } from './table.ts';
export { formatAddress, formatAtom, formatComment, formatKey, validateFamily, validateName, validatePort } from './validate.ts';
export type * from './types.ts';
export { netlinkElseNft } from './netlink-else-nft.ts';
