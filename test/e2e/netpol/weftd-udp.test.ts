// Issue 28: weftd --network-policy on the udp backend (TUN), the cross-node cases of the truth tables.
import { CROSS_NODE_CASES, netpolSuite } from './suite.ts';

netpolSuite('weft', { backend: 'udp', only: CROSS_NODE_CASES });
