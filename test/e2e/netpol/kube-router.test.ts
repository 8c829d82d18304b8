// Issue 28: the same netpol cases against kube-router v2.1.0's policy controller, the reference.
import { netpolSuite } from './suite.ts';

netpolSuite('kube-router');
