// The `weft doctor` subcommand: flags (weftd's names; defaults from the installed unit, then the
// installed paths), the run, the printout (table, or --json), and the exit code: 0 healthy,
// 1 problems found, 2 bad flag.
import { Command } from 'commander';
import { withEtcdSecurityOptions } from '../../agent/inspect.ts';
import { DOCTOR_DEFAULTS, DoctorOptionError, KUBE_CONFIGMAP, normalizeDoctorOptions, type RawDoctorFlags } from './options.ts';
import { KUBELET_KUBECONFIG } from './kube.ts';
import { DEFAULT_UNIT, readUnitFlags, withUnitDefaults } from './unit.ts';

/** The flags as commander hands them over, with --unit. */
export type DoctorCommandFlags = RawDoctorFlags & { unit?: string };

/** The subcommand; `run` gets the raw flags (the heavy modules load only when it runs). */
export function doctorCommand(run: (f: DoctorCommandFlags) => Promise<void>): Command {
  const d = DOCTOR_DEFAULTS;
  return withEtcdSecurityOptions(new Command('doctor')
    .description("look at this node (run it in the node's netns) and say what is wrong and how to fix it")
    .option('--unit <path>', `weftd's systemd unit: its flags are the defaults of the flags below (default ${DEFAULT_UNIT}, if it exists)`)
    .option('--subnet-file <path>', `weftd's subnet.env (default ${d.subnetFile})`)
    .option('--store <spec>', `lease store file:/DIR (default ${d.store})`)
    .option('--etcd-endpoints <urls>', 'etcd v3 endpoints, comma-separated (selects the etcd store)')
    .option('--etcd-prefix <prefix>', `etcd key prefix (default ${d.etcdPrefix})`))
    .option('--net-conf <path>', `flannel net-conf.json (default ${d.netConf}; with etcd, <prefix>/config)`)
    .option('--iface <name|ip>', "uplink interface as weftd's --iface (default: the default route's)")
    .option('--public-ip <ip>', "weftd's --public-ip, when it has one")
    .option('--cni-conf-dir <dir>', `CNI configuration directory (default ${d.cniConfDir})`)
    .option('--cni-bin-dir <dir>', `CNI plugin directory (default ${d.cniBinDir})`)
    .option('--ipam-data-dir <dir>', `host-local's dataDir (default ${d.ipamDataDir})`)
    .option('--bridge <name>', `the pods' bridge (default ${d.bridge})`)
    .option('--metrics-addr <host:port>', `weftd's --metrics-addr: check /healthz and /metrics there (default: the unit's, else ${d.metricsAddr}, where weft install and the DaemonSet serve them)`)
    .option('--kube-subnet-mgr', "the leases are the Nodes' (weftd --kube-subnet-mgr): reads every Node, and checks this node's podCIDR and annotations")
    .option('--kubeconfig-file <path>', `with --kube-subnet-mgr: kubeconfig (default: KUBECONFIG, else ${KUBELET_KUBECONFIG} when present, else the in-cluster service account)`)
    .option('--kube-api-url <url>', "with --kube-subnet-mgr: the API server (overrides the kubeconfig's server)")
    .option('--kube-annotation-prefix <prefix>', 'with --kube-subnet-mgr: node annotation prefix (default flannel.alpha.coreos.com)')
    .option('--node-name <name>', 'with --kube-subnet-mgr: this Node\'s name (default NODE_NAME, else the host name)')
    .option('--kube-configmap <ns/name>', `with --kube-subnet-mgr: the ConfigMap holding net-conf.json when no file has it (default ${KUBE_CONFIGMAP})`)
    .option('--json', 'print one JSON document {"ok", "problems": [{"check", "detail", "fix"}], "checks"}')
    .addHelpText('after', '\nflanneld syntax (-etcd-endpoints=URL) and the FLANNELD_* environment forms of the etcd, --iface,\n--public-ip and --subnet-file flags are taken as weftd takes them; the command line wins.')
    .action(run);
}

/** Runs doctor with the parsed flags and prints; resolves with the exit code. */
export async function runDoctorCommand(f: DoctorCommandFlags, io: { out: (s: string) => void }): Promise<number> {
  const { unit, ...cli } = f;
  let fromUnit: RawDoctorFlags | null;
  try {
    fromUnit = readUnitFlags(unit ?? DEFAULT_UNIT, unit !== undefined);
  } catch (e) {
    throw new DoctorOptionError((e as Error).message);
  }
  const opts = normalizeDoctorOptions(withUnitDefaults(cli, fromUnit), fromUnit !== null);
  const [{ runDoctor }, { formatReportJson, formatReportTable }] = await Promise.all([import('./doctor.ts'), import('./problem.ts')]);
  const report = await runDoctor(opts);
  io.out(opts.json ? formatReportJson(report) : formatReportTable(report));
  return report.ok ? 0 : 1;
}
