// The netpol cases, after upstream's test/e2e/network/netpol/network_policy.go (the same policies and
// truth tables, written here for the x/y/z x a/b/c model): each is a list of NetworkPolicy objects
// and the expected reachability per probe kind. Shared by the weftd and kube-router suites.
import { Reachability, type ProbeKind } from '../../../testkit/netpol-model.ts';

type Obj = Record<string, unknown>;

/** One case; `kubeRouterBug` cites a documented kube-router bug the case shows (counted apart). */
export interface NetpolCase {
  name: string;
  policies: (pods: Map<string, { ip: string; nodeSubnet: string }>) => { metadata: { namespace: string; name: string }; spec: Obj }[];
  expect: (k: ProbeKind) => Reachability;
  kubeRouterBug?: string;
}

const pol = (namespace: string, name: string, spec: Obj) => ({ metadata: { namespace, name }, spec });
const podA = { matchLabels: { pod: 'a' } };
const all = () => new Reachability(true);
const tcp80 = (k: ProbeKind) => k.port === 80 && k.protocol === 'TCP';

export const CASES: NetpolCase[] = [
  {
    name: "default-deny-ingress in x",
    policies: () => [pol('x', 'deny-ingress', { podSelector: {}, policyTypes: ['Ingress'] })],
    expect: () => all().expectPeer({}, { namespace: 'x' }, false),
  },
  {
    name: 'default-deny-all in x (ingress and egress)',
    policies: () => [pol('x', 'deny-all', { podSelector: {}, ingress: [], egress: [], policyTypes: ['Ingress', 'Egress'] })],
    expect: () => all().expectPeer({}, { namespace: 'x' }, false).expectPeer({ namespace: 'x' }, {}, false),
  },
  {
    name: 'x/a allows ingress from x/b only (podSelector, same namespace)',
    policies: () => [pol('x', 'x-a-allows-x-b', { podSelector: podA, ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'b' } } }] }] })],
    expect: () => all().expectAllIngress('x/a', false).expect('x/b', 'x/a', true),
  },
  {
    name: 'x/a allows ingress only from namespace y (namespaceSelector, matchExpressions In)',
    policies: () => [pol('x', 'allow-ns-y', { podSelector: podA, ingress: [{ from: [{ namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['y'] }] } }] }] })],
    expect: () => all().expectPeer({ namespace: 'x' }, { namespace: 'x', pod: 'a' }, false).expectPeer({ namespace: 'z' }, { namespace: 'x', pod: 'a' }, false),
  },
  {
    name: 'x/a allows pod b of namespaces other than x (both selectors in one peer, NotIn)',
    policies: () => [pol('x', 'ns-not-x-and-pod-b', { podSelector: podA, ingress: [{ from: [{ namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['x'] }] }, podSelector: { matchLabels: { pod: 'b' } } }] }] })],
    expect: () => all().expectAllIngress('x/a', false).expect('y/b', 'x/a', true).expect('z/b', 'x/a', true),
  },
  {
    name: 'x/a allows ingress from the cluster CIDR except node 2 pods (ipBlock except)',
    policies: (pods) => [pol('x', 'ipblock-except', { podSelector: podA, ingress: [{ from: [{ ipBlock: { cidr: '10.244.0.0/16', except: [pods.get('x/b')?.nodeSubnet ?? ''] } }] }] })],
    expect: () => all().expectPeer({ pod: 'b' }, { namespace: 'x', pod: 'a' }, false),
  },
  {
    name: 'x/a egress to the cluster CIDR except x/b (egress ipBlock except)',
    policies: (pods) => [pol('x', 'egress-except', { podSelector: podA, policyTypes: ['Egress'], egress: [{ to: [{ ipBlock: { cidr: '10.244.0.0/16', except: [`${pods.get('x/b')?.ip ?? ''}/32`] } }] }] })],
    expect: () => all().expect('x/a', 'x/b', false),
  },
  {
    name: 'x/a allows ingress on TCP 81 only (port by number)',
    policies: () => [pol('x', 'allow-81', { podSelector: podA, ingress: [{ ports: [{ port: 81, protocol: 'TCP' }] }] })],
    expect: (k) => (k.port === 81 ? all() : all().expectAllIngress('x/a', false)),
  },
  {
    name: 'x/a allows ingress on serve-80-udp (named port, UDP)',
    policies: () => [pol('x', 'allow-named-udp', { podSelector: podA, ingress: [{ ports: [{ port: 'serve-80-udp', protocol: 'UDP' }] }] })],
    expect: (k) => (k.protocol === 'UDP' ? all() : all().expectAllIngress('x/a', false)),
  },
  {
    name: 'x/a allows ingress on TCP 80-81 from namespace y (endPort)',
    policies: () => [pol('x', 'allow-80-81', { podSelector: podA, ingress: [{ from: [{ namespaceSelector: { matchLabels: { ns: 'y' } } }], ports: [{ port: 80, endPort: 81, protocol: 'TCP' }] }] })],
    expect: (k) => (k.protocol === 'UDP' ? all().expectAllIngress('x/a', false) : all().expectAllIngress('x/a', false).expectPeer({ namespace: 'y' }, { namespace: 'x', pod: 'a' }, true)),
  },
  {
    name: 'x/a allows ingress on TCP 81-90 only (endPort excludes 80)',
    policies: () => [pol('x', 'allow-81-90', { podSelector: podA, ingress: [{ ports: [{ port: 81, endPort: 90, protocol: 'TCP' }] }] })],
    expect: (k) => (k.port === 81 ? all() : all().expectAllIngress('x/a', false)),
  },
  {
    name: 'egress of x denied except to namespace y (no DNS rule needed: probes use addresses)',
    policies: () => [pol('x', 'egress-to-y', { podSelector: {}, policyTypes: ['Egress'], egress: [{ to: [{ namespaceSelector: { matchLabels: { ns: 'y' } } }] }] })],
    expect: () => all().expectPeer({ namespace: 'x' }, {}, false).expectPeer({ namespace: 'x' }, { namespace: 'y' }, true),
  },
  {
    name: 'policies add up: deny-all ingress in x plus allow-all to x/a',
    policies: () => [pol('x', 'deny-all', { podSelector: {}, policyTypes: ['Ingress'] }),
      pol('x', 'allow-all-to-a', { podSelector: podA, ingress: [{ from: [{ podSelector: {}, namespaceSelector: {} }] }] })],
    expect: () => all().expectAllIngress('x/b', false).expectAllIngress('x/c', false),
  },
  {
    name: 'x/a allows TCP 80 from y/a and UDP from everyone (two rules)',
    policies: () => [pol('x', 'two-rules', { podSelector: podA, ingress: [
      { from: [{ namespaceSelector: { matchLabels: { ns: 'y' } }, podSelector: podA }], ports: [{ port: 80 }] },
      { ports: [{ protocol: 'UDP', port: 80 }] },
    ] })],
    expect: (k) => (k.protocol === 'UDP' ? all() : tcp80(k) ? all().expectAllIngress('x/a', false).expect('y/a', 'x/a', true) : all().expectAllIngress('x/a', false)),
  },
];
