// Public surface of weft's in-process nf_tables path: set/map elements and chain/rule listings over NETLINK_NETFILTER, no `nft` spawned.
export { NfnlSocket, NfnlBatchError, keptNfnlSocket, withNfnlSocket, type NfnlCommand, type NfnlFailure } from './socket.ts';
export { NfnlElemBatch, eachSetElem, findSetElemsByComment, listSetElems, prefixElems } from './set-elements.ts';
export { formatElem, formatSetElemPayload, parseSetElemPayload, type NfnlElem, type NfnlListedElem, type NfnlVerdict } from './elem.ts';
export { formatAtomBytes, formatKeyBytes, parseAtomBytes, parseKeyBytes, prefixInterval } from './key-codec.ts';
export { formatElemComment, formatUdata, parseElemComment, parseUdata, type UdataTlv } from './udata.ts';
export { listBaseChains, listRuleComments, parseBaseChain, parseRuleComment, type NfnlBaseChain } from './chains.ts';
export { NETLINK_NETFILTER, NFT_SET_ELEM_INTERVAL_END } from './constants.ts';
export { batchBytes, elemChangeCommands, type NfnlElemChange } from './elem-changes.ts';
