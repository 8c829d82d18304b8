// Issue 28: weftd --network-policy held to the upstream netpol truth tables (cases.ts).
import { netpolSuite } from './suite.ts';

netpolSuite('weft');
