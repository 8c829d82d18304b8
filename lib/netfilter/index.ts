// Public surface of weft's nftables layer (one weft-owned table, one `nft -f -` transaction per call).
export { NftBatch, type NftApplyResult } from './batch.ts';
export { NftError, type NftErrorKind } from './errors.ts';
export { nftExpr, type NftExpr, type NftExprValue } from './expr.ts';
export { findElementsByComment, findRulesByTag, listSet, listTable, type NftListOptions } from './list.ts';
export { parseNftListing } from './parse-listing.ts';
export { findNft, runNft, type NftOutput } from './run.ts';
export { deleteTable, WEFT_BRIDGE_TABLE, WEFT_TABLE, WEFT_TABLE_V4, WEFT_TABLE_V6 } from './table.ts';
export { formatAddress, formatAtom, formatComment, formatKey, validateFamily, validateName, validatePort } from './validate.ts';
export type * from './types.ts';
export { MASQ_CHAIN, masqNames, setupPodMasquerade, teardownPodMasquerade, type PodMasqSpec } from './masquerade.ts';
export { IPMASQ_CHAIN, KUBE_PROXY_MASQ_MARK, ensureIpMasq, teardownIpMasq, type IpMasqSpec } from './ip-masq.ts';
