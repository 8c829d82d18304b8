// The files of one kubelet node (written in the test's directory, read inside the node's private
// mount namespace): the holder script, containerd's config.toml, the KubeletConfiguration.
import { join } from 'node:path';

/** The /proc/sys files the kubelet's setupKernelTunables writes, and the values it wants: bind-mounted fakes inside the node only. */
export const FAKE_SYSCTLS: Record<string, string> = {
  'vm/overcommit_memory': '1',
  'vm/panic_on_oom': '0',
  'kernel/panic': '10',
  'kernel/panic_on_oops': '1',
};

/**
 * The holder's shell script (run under `unshare --mount --propagation private`): the node's own /run,
 * /var/lib, /var/log, /etc/cni/net.d and /opt/cni/bin (a tmpfs /opt with the machine's entries bound
 * back when /opt/cni is absent), the fake sysctl files; then touches `ready` and sleeps.
 */
export function holderScript(root: string): string {
  const q = (s: string): string => `'${s.replace(/'/g, `'"'"'`)}'`;
  const r = q(root);
  return [
    'set -e',
    `R=${r}`,
    'mount --bind "$R/run" /run',
    'mkdir -p /run/containerd /run/netns /run/flannel',
    'mount --bind "$R/varlib" /var/lib',
    'mount --bind "$R/varlog" /var/log',
    'mount --bind "$R/cni-conf" /etc/cni/net.d',
    'if [ ! -d /opt/cni/bin ]; then',
    '  mkdir -p "$R/host-opt"; mount --bind /opt "$R/host-opt"',
    '  mount -t tmpfs -o mode=755 weft-node-opt /opt',
    '  for e in "$R"/host-opt/*; do [ -e "$e" ] || continue; n=${e##*/}; mkdir -p "/opt/$n"; mount --bind "$e" "/opt/$n"; done',
    '  mkdir -p /opt/cni/bin',
    'fi',
    'mount --bind "$R/cni-bin" /opt/cni/bin',
    ...Object.keys(FAKE_SYSCTLS).map((f) => `mount --bind "$R/fake-sysctl/${f.replace('/', '_')}" /proc/sys/${f}`),
    'touch "$R/ready"',
    'exec sleep 2147483647',
  ].join('\n');
}

/** containerd 1.6's config.toml (schema 2) at its default (private) paths; `sandboxImage` is imported locally. */
export function containerdConfig(sandboxImage: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return [
    'version = 2',
    // opt writes /opt/containerd; the other snapshotters probe host file systems; none is needed.
    'disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",',
    '  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]',
    `[${cri}]`,
    `sandbox_image = ${JSON.stringify(sandboxImage)}`,
    // This machine withholds CAP_SYS_RESOURCE: runc may only raise oom_score_adj.
    'restrict_oom_score_adj = true',
    'disable_apparmor = true',
    `[${cri}.containerd]`,
    'snapshotter = "native"',
    'default_runtime_name = "runc"',
    `[${cri}.containerd.runtimes.runc]`,
    'runtime_type = "io.containerd.runc.v2"',
    `[${cri}.cni]`,
    'bin_dir = "/opt/cni/bin"',
    'conf_dir = "/etc/cni/net.d"',
    'max_conf_num = 1',
    '',
  ].join('\n');
}

/** The KubeletConfiguration of a node: cgroupfs under its own cgroup root, no swap check, certs of the kit. */
export function kubeletConfig(o: { cgroupRoot: string; address: string; clientCa: string; clusterDns?: string }): string {
  return [
    'apiVersion: kubelet.config.k8s.io/v1beta1',
    'kind: KubeletConfiguration',
    'cgroupDriver: cgroupfs',
    `cgroupRoot: ${o.cgroupRoot}`,
    'failSwapOn: false',
    `address: ${o.address}`,
    'readOnlyPort: 0',
    'healthzBindAddress: 127.0.0.1',
    'containerRuntimeEndpoint: unix:///run/containerd/containerd.sock',
    'authentication:',
    '  anonymous: {enabled: false}',
    '  webhook: {enabled: true}',
    `  x509: {clientCAFile: ${o.clientCa}}`,
    'authorization: {mode: Webhook}',
    'clusterDomain: cluster.local',
    ...(o.clusterDns !== undefined ? [`clusterDNS: [${o.clusterDns}]`] : []),
    'resolvConf: /etc/resolv.conf',
    // The disk is shared with other work: never evict or garbage-collect because of it.
    'evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}',
    'imageGCHighThresholdPercent: 100',
    'imageGCLowThresholdPercent: 99',
    'serializeImagePulls: false',
    '',
  ].join('\n');
}

/** The directories of a node's root `root` the holder binds (created before it starts). */
export function nodeDirs(root: string): string[] {
  return ['run', 'varlib', 'varlog', 'cni-conf', 'cni-bin', 'fake-sysctl'].map((d) => join(root, d));
}
