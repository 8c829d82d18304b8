// Issue 28: weftd --network-policy on the vxlan backend, the cross-node cases of the truth tables.
import { CROSS_NODE_CASES, netpolSuite } from './suite.ts';

netpolSuite('weft', { backend: 'vxlan', only: CROSS_NODE_CASES });
