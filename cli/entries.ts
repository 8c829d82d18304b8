// The executables weft ships, each one self-contained bundle dist/bin/<name> and one name of the
// standalone file: read by the build (scripts/build/), by `weft install` (which of them are CNI
// plugins), by the standalone dispatcher (cli/standalone/sea-entries.ts, generated from it) and by the
// test kit. Kept in cli/, the shipped room that already knows every executable (it installs and
// dispatches them), so that shipped code never imports scripts/; data only, no imports, so every
// room that may import cli/ (scripts, testkit, test) can read it.
export interface Entry {
  /** File name under dist/bin/ (what a runtime finds on CNI_PATH). */
  name: string;
  /** TypeScript entry point, relative to the repository root. */
  source: string;
  /** Packages left out of the bundle and loaded from node_modules at run time (none today: etcd3's protos are embedded by scripts/build/etcd3-protos.ts). */
  external?: string[];
  /** false: a plain bundle, without the V8 code-cache loader (see lib/sys/code-cache.ts). Default true. */
  codeCache?: boolean;
  /** true: embeds the full addon with the udp backend's packet I/O (weftd); others embed the lean build. Default false. */
  packetIo?: boolean;
}

export const ENTRIES: readonly Entry[] = [
  { name: 'loopback', source: 'plugins/loopback/main.ts' },
  { name: 'host-local', source: 'ipam/host-local/main.ts' },
  { name: 'bridge', source: 'plugins/bridge/main.ts' },
  { name: 'portmap', source: 'plugins/portmap/main.ts' },
  { name: 'bandwidth', source: 'plugins/bandwidth/main.ts' },
  { name: 'flannel', source: 'plugins/flannel/main.ts' },
  { name: 'firewall', source: 'plugins/firewall/main.ts' },
  { name: 'tuning', source: 'plugins/tuning/main.ts' },
  { name: 'flannel-vxlan', source: 'plugins/flannel-vxlan/main.ts' },
  { name: 'host-gw', source: 'plugins/host-gw/main.ts' },
  { name: 'flannel-udp', source: 'plugins/flannel-udp/main.ts' },
  { name: 'weftd', source: 'agent/main.ts', codeCache: false, packetIo: true },
  // The installer CLI (`weft install`), the package.json "bin"; never copied into a CNI bin dir.
  { name: 'weft', source: 'cli/weft.ts', codeCache: false },
];
