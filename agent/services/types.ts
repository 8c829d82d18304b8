// The Kubernetes objects the Service proxy reads (only the fields it uses) and its options. Pure types.
import type { KubeObject } from './informer.ts';

/** v1 ServicePort. */
export interface ServicePortSpec {
  name?: string;
  protocol?: string;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}

/** v1 Service (spec and the LoadBalancer ingress of status). */
export interface Service extends KubeObject {
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ports?: ServicePortSpec[];
    externalIPs?: string[];
    sessionAffinity?: string;
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
    externalTrafficPolicy?: string;
    internalTrafficPolicy?: string;
    healthCheckNodePort?: number;
    ipFamilies?: string[];
  };
  status?: { loadBalancer?: { ingress?: { ip?: string; ipMode?: string }[] } };
}

/** discovery.k8s.io/v1 Endpoint. */
export interface SliceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null };
  nodeName?: string;
}

/** discovery.k8s.io/v1 EndpointSlice. */
export interface EndpointSlice extends KubeObject {
  addressType?: string;
  endpoints?: SliceEndpoint[] | null;
  ports?: { name?: string | null; protocol?: string; port?: number | null }[] | null;
}

/** The label that ties an EndpointSlice to its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** What the node contributes to the desired state (weftd's flags and this node's identity). */
export interface ProxyNodeConfig {
  /** This node's name (EndpointSlice endpoints' nodeName), for the Local traffic policies. */
  nodeName: string;
  /** The cluster's pod networks (flannel's Network / IPv6Network): sources outside them are masqueraded to a ClusterIP. */
  clusterCidrs: string[];
  /** --nodeport-addresses: CIDRs whose local addresses take NodePorts; empty: every local address but loopback. */
  nodePortAddresses: string[];
}
