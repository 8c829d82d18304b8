// The Service suite against the real kube-proxy v1.34.4 in iptables mode.
import { kubeProxySuite } from './kube-proxy-peer.ts';

kubeProxySuite('iptables');
