// One bad value for every flag weftd and flanneld accept (issue 27 item 3), as data: the unit table
// (flags-table.test.ts) runs the 'flags' ones through weftd's flag parsing, the namespace table
// (test/ns/agent/weftd-flags.test.ts) runs every one through the built weftd against a real store
// and checks that nothing was written. $DIR is the test's directory, $FILE a regular file in it.

/** Where a case is refused: by the flag checks (exit 2, nothing opened) or at start, before the store is written (exit 1). */
export type Stage = 'flags' | 'start';

/** Lease stores a case runs against in the namespace table. */
export type StoreKind = 'file' | 'etcd' | 'kube';

/** One bad input. */
export interface FlagCase {
  /** The flag this case covers (weftd's long name without dashes, or flanneld's). */
  flag: string;
  /** Appended to a working command line (commander takes the last value of a single-valued flag). */
  args: string[];
  /** Flags of the working command line left out (with their value), e.g. the --iface the case replaces. */
  without?: string[];
  /** Environment changes (null removes the variable). */
  env?: Record<string, string | null>;
  /** What the error says. */
  error: RegExp;
  stage: Stage;
  /** Stores to run against in the namespace table (default: file only; address flags: all three). */
  stores?: StoreKind[];
}

const ALL: StoreKind[] = ['file', 'etcd', 'kube'];

/** A working command line with the case's `without` flags (and their values) left out. */
export function baseWithout(args: readonly string[], without: readonly string[] = []): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (without.includes(args[i] as string)) i++;
    else out.push(args[i] as string);
  }
  return out;
}

/** Every case; flags-table.test.ts checks that each flag of weftd and of flanneld has one. */
export const FLAG_CASES: FlagCase[] = [
  // Lease source.
  { flag: 'net-conf', args: ['--net-conf='], error: /--net-conf \(--net-config-path\) "" names no file/, stage: 'flags' },
  { flag: 'net-conf', args: ['--net-conf', '$DIR/no-such-net-conf.json'], error: /--net-conf "[^"]*no-such-net-conf.json": .*no such file/, stage: 'start' },
  { flag: 'net-config-path', args: ['--net-config-path', '$DIR/other.json'], error: /--net-conf and --net-config-path are the same flag/, stage: 'flags' },
  { flag: 'store', args: ['--store', 'leases'], error: /--store "leases" must be file:\/absolute\/dir/, stage: 'flags' },
  { flag: 'etcd-endpoints', args: ['--etcd-endpoints', 'http://192.0.2.2:2379,foo'], error: /--etcd-endpoints: "foo" is not an http:\/\/ or https:\/\/ URL/, stage: 'flags', stores: ['etcd'] },
  { flag: 'etcd-endpoints', args: ['--etcd-endpoints', '127.0.0.1:2379'], error: /--etcd-endpoints: "127.0.0.1:2379" is not an http:\/\/ or https:\/\/ URL/, stage: 'flags', stores: ['etcd'] },
  { flag: 'etcd-prefix', args: ['--etcd-prefix', 'coreos.com/network'], error: /--etcd-prefix "coreos.com\/network" must start with "\/"/, stage: 'flags', stores: ['etcd'] },
  { flag: 'etcd-keyfile', args: ['--etcd-keyfile', '$DIR/key.pem'], error: /--etcd-certfile and --etcd-keyfile go together/, stage: 'flags', stores: ['etcd'] },
  { flag: 'etcd-certfile', args: ['--etcd-certfile', '$DIR/cert.pem'], error: /--etcd-certfile and --etcd-keyfile go together/, stage: 'flags', stores: ['etcd'] },
  { flag: 'etcd-cafile', args: ['--etcd-cafile', '$DIR/no-such-ca.pem'], error: /no-such-ca\.pem/, stage: 'start', stores: ['etcd'] },
  { flag: 'etcd-cafile', args: ['--etcd-cafile', '$DIR/ca.pem'], error: /--etcd-cafile need --etcd-endpoints/, stage: 'flags' },
  { flag: 'etcd-username', args: ['--etcd-username', 'flannel'], error: /--etcd-username need --etcd-endpoints/, stage: 'flags' },
  { flag: 'etcd-password', args: ['--etcd-password', 'secret'], error: /--etcd-password needs --etcd-username/, stage: 'flags', stores: ['etcd'] },
  { flag: 'kube-subnet-mgr', args: ['--kube-subnet-mgr=maybe'], error: /--kube-subnet-mgr "maybe" is not a boolean/, stage: 'flags' },
  { flag: 'kube-subnet-mgr', args: [], env: { NODE_NAME: null }, error: /NODE_NAME/, stage: 'flags', stores: ['kube'] },
  { flag: 'kubeconfig-file', args: ['--kubeconfig-file='], error: /--kubeconfig-file "" names no file/, stage: 'flags', stores: ['kube'] },
  { flag: 'kubeconfig-file', args: ['--kubeconfig-file', '$DIR/no-such-kubeconfig'], error: /no-such-kubeconfig/, stage: 'start', stores: ['kube'] },
  { flag: 'kube-api-url', args: ['--kube-api-url', 'apiserver:6443'], error: /--kube-api-url "apiserver:6443" is not an http:\/\/ or https:\/\/ URL/, stage: 'flags', stores: ['kube'] },
  { flag: 'kube-annotation-prefix', args: ['--kube-annotation-prefix', 'Not A Prefix'], error: /--kube-annotation-prefix "Not A Prefix" is not a DNS-style prefix/, stage: 'flags', stores: ['kube'] },
  { flag: 'subnet-lease-renew-margin', args: ['--subnet-lease-renew-margin', '1440'], error: /--subnet-lease-renew-margin "1440" must be an integer from 1 to 1439/, stage: 'flags' },
  { flag: 'lease-ttl', args: ['--lease-ttl', '1'], error: /--lease-ttl "1" must be an integer of at least 5/, stage: 'flags' },
  // The node's address and uplink: never a lease with a wrong PublicIP in a shared store.
  { flag: 'public-ip', args: ['--public-ip', 'foo'], error: /--public-ip "foo" is not an IPv4 address/, stage: 'flags', stores: ALL },
  { flag: 'public-ip', args: ['--public-ip', '192.0.2.300'], error: /--public-ip "192.0.2.300" is not an IPv4 address/, stage: 'flags' },
  { flag: 'public-ip', args: ['--public-ip', '2001:db8::1'], error: /--public-ip "2001:db8::1" is not an IPv4 address/, stage: 'flags' },
  { flag: 'public-ip', args: [], env: { FLANNELD_PUBLIC_IP: 'foo' }, error: /--public-ip "foo" is not an IPv4 address/, stage: 'flags' },
  { flag: 'public-ipv6', args: ['--public-ipv6', '10.0.0.1'], error: /--public-ipv6 "10.0.0.1" is not an IPv6 address/, stage: 'flags', stores: ALL },
  { flag: 'iface', args: ['--iface', 'eth0/x'], error: /--iface "eth0\/x" is neither an IP address nor an interface name/, stage: 'flags' },
  { flag: 'iface', args: ['--iface', 'nosuch0'], without: ['--iface'], error: /--iface nosuch0: no such interface, address or route/, stage: 'start', stores: ALL },
  { flag: 'iface-regex', args: ['--iface-regex', '('], error: /--iface-regex "\(" is not a valid regular expression/, stage: 'flags' },
  { flag: 'iface-can-reach', args: ['--iface-can-reach', 'x'], error: /--iface-can-reach "x" is not an IP address/, stage: 'flags', stores: ALL },
  { flag: 'subnet-file', args: ['--subnet-file', 'run/subnet.env'], error: /--subnet-file "run\/subnet.env" must be an absolute path/, stage: 'flags' },
  { flag: 'subnet-file', args: ['--subnet-file', '$FILE/subnet.env'], error: /--subnet-file "[^"]*": [^ ]* is not a directory/, stage: 'start', stores: ALL },
  // Other behaviour.
  { flag: 'ip-masq', args: ['--ip-masq=maybe'], error: /--ip-masq "maybe" is not a boolean/, stage: 'flags' },
  { flag: 'iptables-forward-rules', args: ['--iptables-forward-rules=maybe'], error: /--iptables-forward-rules "maybe" is not a boolean/, stage: 'flags' },
  { flag: 'no-iptables-forward-rules', args: ['--no-iptables-forward-rules=x'], error: /unknown option '--no-iptables-forward-rules=x'/, stage: 'flags' },
  { flag: 'resync-interval', args: ['--resync-interval', '5'], error: /--resync-interval "5" must be an integer from 100 to 3600000/, stage: 'flags' },
  { flag: 'log-level', args: ['--log-level', 'loud'], error: /--log-level "loud" must be one of debug, info, warn, error/, stage: 'flags' },
  { flag: 'v', args: ['-v=x'], error: /--v "x" must be a non-negative integer/, stage: 'flags' },
  { flag: 'healthz-ip', args: ['--healthz-ip', 'foo', '--healthz-port', '9102'], error: /--healthz-ip "foo" is not an IP address/, stage: 'flags', stores: ALL },
  { flag: 'healthz-ip', args: ['--healthz-ip', '198.51.100.1', '--healthz-port', '9102'], error: /EADDRNOTAVAIL/, stage: 'start', stores: ALL },
  { flag: 'healthz-port', args: ['--healthz-port', '70000'], error: /--healthz-port "70000" must be a port number/, stage: 'flags' },
  { flag: 'metrics-addr', args: ['--metrics-addr', 'foo:9101'], error: /--metrics-addr "foo:9101": "foo" is not an IP address/, stage: 'flags', stores: ALL },
  { flag: 'metrics-addr', args: ['--metrics-addr', '9101'], error: /--metrics-addr "9101" must be HOST:PORT/, stage: 'flags' },
  { flag: 'service-proxy', args: ['--service-proxy'], env: { NODE_NAME: null }, error: /--service-proxy: NODE_NAME is not set/, stage: 'flags' },
  { flag: 'nodeport-addresses', args: ['--nodeport-addresses', '10.0.0.0/8'], error: /--nodeport-addresses needs --service-proxy/, stage: 'flags' },
  { flag: 'nodeport-addresses', args: ['--service-proxy', '--nodeport-addresses', '10.0.0.0'], env: { NODE_NAME: 'n1' }, error: /--nodeport-addresses "10.0.0.0" is not a CIDR/, stage: 'flags' },
  { flag: 'network-policy', args: ['--network-policy=yes'], error: /unknown option '--network-policy=yes'/, stage: 'flags' },
  { flag: 'unknown', args: ['--public-ipv4', '192.0.2.11'], error: /unknown option '--public-ipv4'/, stage: 'flags' },
  // flanneld flags weftd has no use for: refused unless they hold flanneld's default.
  { flag: 'set-node-network-unavailable', args: ['--set-node-network-unavailable=false'], error: /--set-node-network-unavailable=false: flanneld flag not supported by weftd/, stage: 'flags' },
  { flag: 'iptables-resync', args: ['-iptables-resync=10'], error: /--iptables-resync=10: flanneld flag not supported by weftd/, stage: 'flags' },
  { flag: 'ip-masq-fully-random-disable', args: ['--ip-masq-fully-random-disable'], error: /--ip-masq-fully-random-disable=true: flanneld flag not supported/, stage: 'flags' },
  { flag: 'ip-blackhole-route', args: ['--ip-blackhole-route=true'], error: /--ip-blackhole-route=true: flanneld flag not supported/, stage: 'flags' },
  { flag: 'vmodule', args: ['--vmodule=main=2'], error: /--vmodule=main=2: flanneld flag not supported/, stage: 'flags' },
  { flag: 'log_backtrace_at', args: ['--log_backtrace_at=main.go:10'], error: /--log_backtrace_at=main.go:10: flanneld flag not supported/, stage: 'flags' },
];

/** Flags with nothing to get wrong: they print and exit 0 before anything else. */
export const NO_VALUE_FLAGS = ['version', 'help'];
