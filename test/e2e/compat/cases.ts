// Inputs of the decode-vs-reference table: per plugin a base config and its variants (key spelling,
// duplicate keys, unknown keys, wrong types, missing required keys, cniVersion values). A case is a
// config object or raw JSON text (duplicate keys cannot be written as an object literal).

export type PluginName = 'bridge' | 'host-local' | 'portmap' | 'loopback';

/** One input: `conf` is merged over the plugin's base (a key set to undefined is removed), or `raw` replaces it. */
export interface Case {
  plugin: PluginName;
  name: string;
  conf?: Record<string, unknown>;
  raw?: (base: Record<string, unknown>) => string;
  /** CNI_ARGS. */
  args?: string;
  /** Set when weft differs from reference 1.1.1 on purpose: why (docs/decoding.md lists them). */
  divergence?: string;
}

const VERSIONS = ['', '0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '2.0.0', 'abc', '1.0'];

/** Base configs; `dataDir` is filled in per implementation. */
export function baseConf(plugin: PluginName, cniVersion = '1.0.0'): Record<string, unknown> {
  switch (plugin) {
    case 'bridge':
      return { cniVersion, name: 'cmpnet', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true, ipam: { type: 'host-local', subnet: '10.77.0.0/24' } };
    case 'host-local':
      return { cniVersion, name: 'cmpnet', type: 'host-local', ipam: { type: 'host-local', ranges: [[{ subnet: '10.78.0.0/24' }]] } };
    case 'portmap':
      return { cniVersion, name: 'cmpnet', type: 'portmap', capabilities: { portMappings: true }, runtimeConfig: { portMappings: [{ hostPort: 18080, containerPort: 80, protocol: 'tcp' }] } };
    case 'loopback':
      return { cniVersion, name: 'cmpnet', type: 'loopback' };
  }
}

const dup = (text: string) => (base: Record<string, unknown>): string => `${JSON.stringify(base).slice(0, -1)},${text}}`;

function common(plugin: PluginName): Case[] {
  const out: Case[] = [];
  for (const v of VERSIONS) out.push({ plugin, name: `cniVersion ${JSON.stringify(v)}`, conf: { cniVersion: v } });
  out.push(
    { plugin, name: 'cniVersion missing', conf: { cniVersion: undefined } },
    { plugin, name: 'cniVersion 1.1.0', conf: { cniVersion: '1.1.0' }, divergence: 'weft speaks CNI 1.1.0; reference 1.1.1 does not' },
    { plugin, name: 'key CNIVersion', conf: { cniVersion: undefined, CNIVersion: '1.0.0' } },
    { plugin, name: 'key CNIVERSION 0.4.0', conf: { cniVersion: undefined, CNIVERSION: '0.4.0' } },
    { plugin, name: 'keys Name, Type', conf: { name: undefined, type: undefined, Name: 'cmpnet', Type: plugin } },
    { plugin, name: 'cniVersion number', conf: { cniVersion: 1 } },
    { plugin, name: 'name number', conf: { name: 5 } },
    { plugin, name: 'name missing', conf: { name: undefined } },
    { plugin, name: 'name with a slash', conf: { name: 'a/b' } },
    { plugin, name: 'unknown top-level keys', conf: { fooBar: { x: [1, 'y'] }, zzz: null, 'odd/key': 5 } },
    { plugin, name: 'dns wrong type', conf: { dns: 'x' } },
    { plugin, name: 'dns case variants', conf: { DNS: { Nameservers: ['10.0.0.10'], Search: ['a.b'] } } },
    { plugin, name: 'capabilities wrong type', conf: { capabilities: 5 } },
    { plugin, name: 'args unknown parts', conf: { args: { foo: { bar: 1 }, cni: { other: true } } } },
    { plugin, name: 'runtimeConfig unknown parts', conf: { runtimeConfig: { bandwidth: { ingressRate: 1 }, foo: 'x' } } },
    { plugin, name: 'duplicate name, later wins', raw: dup('"NAME":"cmpnet2"') },
    { plugin, name: 'stdin not an object', raw: () => '[1,2]' },
  );
  return out;
}

const bridgeCases: Case[] = [
  ...common('bridge'),
  { plugin: 'bridge', name: 'keys IsGateway, IPMasq, Bridge, MTU', conf: { isGateway: undefined, ipMasq: undefined, IsGateway: true, IPMasq: true, Bridge: 'cni0', MTU: 1400 } },
  { plugin: 'bridge', name: 'key IPAM with Type, Subnet', conf: { ipam: undefined, IPAM: { Type: 'host-local', Subnet: '10.77.0.0/24' } } },
  { plugin: 'bridge', name: 'keys HairpinMode, PromiscMode false', conf: { HairpinMode: true, PromiscMode: false } },
  { plugin: 'bridge', name: 'mtu string', conf: { mtu: '1400' } },
  { plugin: 'bridge', name: 'mtu 1400.5', conf: { mtu: 1400.5 } },
  { plugin: 'bridge', name: 'isGateway string', conf: { isGateway: 'true' } },
  { plugin: 'bridge', name: 'ipMasq number', conf: { ipMasq: 1 } },
  { plugin: 'bridge', name: 'bridge number', conf: { bridge: 5 } },
  { plugin: 'bridge', name: 'bridge name too long', conf: { bridge: 'a-very-long-bridge-name' } },
  { plugin: 'bridge', name: 'hairpinMode and promiscMode', conf: { hairpinMode: true, promiscMode: true } },
  { plugin: 'bridge', name: 'ipam missing', conf: { ipam: undefined }, divergence: 'the reference bridge without ipam.type makes an L2-only attachment; weft bridge always needs IPAM (code 7)' },
  { plugin: 'bridge', name: 'ipam wrong type', conf: { ipam: 'host-local' } },
  { plugin: 'bridge', name: 'ipam.type missing', conf: { ipam: { subnet: '10.77.0.0/24' } }, divergence: 'the reference bridge without ipam.type makes an L2-only attachment; weft bridge always needs IPAM (code 7)' },
  { plugin: 'bridge', name: 'ipam.subnet number', conf: { ipam: { type: 'host-local', subnet: 5 } } },
  { plugin: 'bridge', name: 'unknown ipam keys', conf: { ipam: { type: 'host-local', subnet: '10.77.0.0/24', foo: 1 } } },
  { plugin: 'bridge', name: 'runtimeConfig.mac case variant', conf: { RuntimeConfig: { MAC: '0a:58:0a:4d:00:09' } } },
  { plugin: 'bridge', name: 'runtimeConfig.mac wrong type', conf: { runtimeConfig: { mac: 5 } } },
  { plugin: 'bridge', name: 'args.cni.mac case variant', conf: { Args: { CNI: { Mac: '0a:58:0a:4d:00:0a' } } } },
  { plugin: 'bridge', name: 'duplicate mtu: string then number', raw: dup('"mtu":"x","MTU":1400') },
  { plugin: 'bridge', name: 'duplicate mtu: number then string', raw: dup('"MTU":1400,"mtu":"x"') },
  { plugin: 'bridge', name: 'null mtu', conf: { mtu: null } },
  { plugin: 'bridge', name: 'duplicate ipam objects merge', raw: (b) => `${JSON.stringify({ ...b, ipam: { type: 'host-local', dataDir: (b['ipam'] as Record<string, unknown>)['dataDir'] } }).slice(0, -1)},"IPAM":{"subnet":"10.77.0.0/24"}}` },
  { plugin: 'bridge', name: 'duplicate ipam: wrong type first', raw: (b) => `{"IPAM":"x",${JSON.stringify(b).slice(1)}` },
  { plugin: 'bridge', name: 'exact duplicate key: wrong type first', raw: (b) => `{"ipam":"x",${JSON.stringify(b).slice(1)}`, divergence: 'JSON.parse keeps only the last of two identically spelled keys, so weft never sees the first; Go type-checks both' },
  { plugin: 'bridge', name: 'KELVIN SIGN in a key (\u212a)', raw: dup('"\u212aEEP":1,"isGateway":true') },
  { plugin: 'bridge', name: 'isDefaultGateway case variant', conf: { ISDEFAULTGATEWAY: true } },
  { plugin: 'bridge', name: 'forceAddress wrong type', conf: { forceAddress: 'no' } },
  { plugin: 'bridge', name: 'enabledad wrong type', conf: { enabledad: 0 } },
  { plugin: 'bridge', name: 'macspoofchk key MacSpoofChk', conf: { MacSpoofChk: true } },
  { plugin: 'bridge', name: 'dns.nameservers wrong type', conf: { dns: { nameservers: '10.0.0.10' } } },
  { plugin: 'bridge', name: 'prevResult wrong type on ADD', conf: { prevResult: 'x' } },
  { plugin: 'bridge', name: 'vlanTrunk set', conf: { vlanTrunk: [{ id: 5 }] }, divergence: 'weft refuses newer-reference keys it does not implement (code 2); reference 1.1.1 does not know them' },
];

const hostLocalCases: Case[] = [
  ...common('host-local'),
  { plugin: 'host-local', name: 'keys IPAM, Ranges, Subnet', conf: { ipam: undefined, IPAM: { Type: 'host-local', Ranges: [[{ Subnet: '10.78.0.0/24', RangeStart: '10.78.0.10', RangeEnd: '10.78.0.20', Gateway: '10.78.0.1' }]] } } },
  { plugin: 'host-local', name: 'legacy Subnet key', conf: { ipam: { type: 'host-local', Subnet: '10.78.0.0/24', Gateway: '10.78.0.1' } } },
  { plugin: 'host-local', name: 'containerd ipRanges [[{Subnet}]]', conf: { runtimeConfig: { ipRanges: [[{ Subnet: '10.79.0.0/24' }]] } } },
  { plugin: 'host-local', name: 'IPRanges key', conf: { RuntimeConfig: { IPRanges: [[{ subnet: '10.79.0.0/24' }]] } } },
  { plugin: 'host-local', name: 'args.cni.ips case variant', conf: { Args: { CNI: { IPs: ['10.78.0.42'] } } } },
  { plugin: 'host-local', name: 'runtimeConfig.ips case variant', conf: { runtimeConfig: { IPS: ['10.78.0.43'] } } },
  { plugin: 'host-local', name: 'routes case variants', conf: { ipam: { type: 'host-local', ranges: [[{ subnet: '10.78.0.0/24' }]], Routes: [{ Dst: '0.0.0.0/0', GW: '10.78.0.1' }] } } },
  { plugin: 'host-local', name: 'ranges wrong type', conf: { ipam: { type: 'host-local', ranges: { subnet: '10.78.0.0/24' } } } },
  { plugin: 'host-local', name: 'subnet number', conf: { ipam: { type: 'host-local', ranges: [[{ subnet: 10 }]] } } },
  { plugin: 'host-local', name: 'no subnet at all', conf: { ipam: { type: 'host-local' } } },
  { plugin: 'host-local', name: 'range without subnet', conf: { ipam: { type: 'host-local', ranges: [[{ rangeStart: '10.78.0.5' }]] } } },
  { plugin: 'host-local', name: 'subnet not a CIDR', conf: { ipam: { type: 'host-local', ranges: [[{ subnet: '10.78.0.0' }]] } } },
  { plugin: 'host-local', name: 'ipam missing', conf: { ipam: undefined } },
  { plugin: 'host-local', name: 'unknown ipam and range keys', conf: { ipam: { type: 'host-local', foo: 1, ranges: [[{ subnet: '10.78.0.0/24', bar: [] }]] } } },
  { plugin: 'host-local', name: 'args.cni.ips wrong type', conf: { args: { cni: { ips: '10.78.0.42' } } } },
  { plugin: 'host-local', name: 'dataDir number', conf: { ipam: { type: 'host-local', ranges: [[{ subnet: '10.78.0.0/24' }]], dataDir: 5 } } },
  { plugin: 'host-local', name: 'duplicate ranges: later wins', raw: (b) => dup('"IPAM":{"ranges":[[{"subnet":"10.80.0.0/24"}]]}')(b) },
  { plugin: 'host-local', name: 'CNI_ARGS IP= with unknown key', args: 'IP=10.78.0.44;FOO=1' },
  { plugin: 'host-local', name: 'CNI_ARGS IgnoreUnknown', args: 'IgnoreUnknown=1;IP=10.78.0.45;K8S_POD_NAME=x' },
  { plugin: 'host-local', name: 'ranges elements merge with a later Ranges', raw: (b) => dup('"IPAM":{"Ranges":[[{"rangeStart":"10.78.0.50"}]]}')(b) },
  { plugin: 'host-local', name: 'top-level type number (no such field)', conf: { type: 5 } },
  { plugin: 'host-local', name: 'prevResult garbage (no such field)', conf: { prevResult: 'x' } },
  { plugin: 'host-local', name: 'routes gw wrong type', conf: { ipam: { type: 'host-local', ranges: [[{ subnet: '10.78.0.0/24' }]], routes: [{ dst: '0.0.0.0/0', gw: 5 }] } } },
  { plugin: 'host-local', name: 'resolvConf wrong type', conf: { ipam: { type: 'host-local', ranges: [[{ subnet: '10.78.0.0/24' }]], resolvConf: [] } } },
  { plugin: 'host-local', name: 'runtimeConfig.ips wrong type', conf: { runtimeConfig: { ips: '10.78.0.46' } } },
];

const pm = (m: Record<string, unknown>): Record<string, unknown> => ({ runtimeConfig: { portMappings: [m] } });

const portmapCases: Case[] = [
  ...common('portmap'),
  { plugin: 'portmap', name: 'containerd 1.6 portMappings', conf: pm({ HostPort: 18080, ContainerPort: 80, Protocol: 'tcp', HostIP: '' }) },
  { plugin: 'portmap', name: 'RuntimeConfig.PortMappings keys', conf: { runtimeConfig: undefined, RuntimeConfig: { PortMappings: [{ hostport: 18080, containerport: 80, PROTOCOL: 'tcp' }] } } },
  { plugin: 'portmap', name: 'protocol missing', conf: pm({ hostPort: 18080, containerPort: 80 }), divergence: 'reference 1.1.1 passes an empty protocol to iptables and fails; weft defaults to tcp as the CNI conventions say' },
  { plugin: 'portmap', name: 'protocol upper case', conf: pm({ hostPort: 18080, containerPort: 80, protocol: 'UDP' }) },
  { plugin: 'portmap', name: 'hostPort string', conf: pm({ hostPort: '18080', containerPort: 80 }) },
  { plugin: 'portmap', name: 'hostPort missing', conf: pm({ containerPort: 80 }) },
  { plugin: 'portmap', name: 'containerPort 0', conf: pm({ hostPort: 18080, containerPort: 0 }) },
  { plugin: 'portmap', name: 'hostPort 70000', conf: pm({ hostPort: 70000, containerPort: 80 }) },
  { plugin: 'portmap', name: 'hostIP 127.0.0.1', conf: pm({ hostPort: 18080, containerPort: 80, protocol: 'tcp', hostIP: '127.0.0.1' }) },
  { plugin: 'portmap', name: 'portMappings wrong type', conf: { runtimeConfig: { portMappings: { hostPort: 1 } } } },
  { plugin: 'portmap', name: 'unknown mapping keys', conf: pm({ hostPort: 18080, containerPort: 80, protocol: 'tcp', foo: 'bar' }) },
  { plugin: 'portmap', name: 'snat false, SNAT key', conf: { SNAT: false } },
  { plugin: 'portmap', name: 'snat wrong type', conf: { snat: 'no' } },
  { plugin: 'portmap', name: 'externalSetMarkChain', conf: { externalSetMarkChain: 'KUBE-MARK-MASQ' } },
  { plugin: 'portmap', name: 'markMasqBit 13', conf: { markMasqBit: 13 } },
  { plugin: 'portmap', name: 'markMasqBit 32', conf: { markMasqBit: 32 } },
  { plugin: 'portmap', name: 'markMasqBit with externalSetMarkChain', conf: { markMasqBit: 13, externalSetMarkChain: 'KUBE-MARK-MASQ' } },
  { plugin: 'portmap', name: 'conditionsV4', conf: { conditionsV4: ['!', '-s', '192.0.2.0/24'] } },
  { plugin: 'portmap', name: 'conditionsV4 wrong type', conf: { conditionsV4: '-s 1.2.3.4' } },
  { plugin: 'portmap', name: 'backend nftables', conf: { backend: 'nftables' } },
  { plugin: 'portmap', name: 'masqAll', conf: { MasqAll: true } },
  { plugin: 'portmap', name: 'masqAll wrong type', conf: { masqAll: 'yes' }, divergence: 'masqAll is a key of newer reference releases (checked as they type it); reference 1.1.1 does not know it' },
  { plugin: 'portmap', name: 'two mappings, mixed spellings', conf: { runtimeConfig: { portMappings: [{ HostPort: 18080, ContainerPort: 80, Protocol: 'tcp' }, { hostPort: 18053, containerPort: 53, protocol: 'udp' }] } } },
  { plugin: 'portmap', name: 'duplicate portMappings: later wins', raw: (b) => dup('"RuntimeConfig":{"PortMappings":[{"HostPort":18081,"ContainerPort":81,"Protocol":"tcp"}]}')(b) },
  { plugin: 'portmap', name: 'hostIP wrong type', conf: pm({ hostPort: 18080, containerPort: 80, protocol: 'tcp', hostIP: 5 }) },
];

const loopbackCases: Case[] = [...common('loopback')];

const DIVERGENCES: Record<string, string> = {
  'portmap: cniVersion ""': 'portmap is chained, so a runtime always gives it a cniVersion; for 0.1.0 the reference cannot parse any prevResult, weft reads the 0.1.0 one it is given',
  'portmap: cniVersion missing': 'as for cniVersion ""',
  'loopback: cniVersion "0.1.0"': 'result format: reference loopback given "0.1.0" prints the 1.0 shape (interfaces, ips) labelled 0.1.0 (given "" it prints ip4/ip6); weft prints the 0.1.0 shape (ip4, ip6) as bridge and host-local of both do',
  'loopback: cniVersion "0.2.0"': 'result format: as for 0.1.0',
};

/** Every case of the table. */
export const CASES: readonly Case[] = [...bridgeCases, ...hostLocalCases, ...portmapCases, ...loopbackCases].map((c) => {
  const d = DIVERGENCES[`${c.plugin}: ${c.name}`];
  return d === undefined ? c : { ...c, divergence: d };
});
