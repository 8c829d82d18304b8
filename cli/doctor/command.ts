// The `weft doctor` subcommand: flags (weftd's names and defaults as installed), the run, the
// printout (table, or --json), and the exit code: 0 healthy, 1 problems found, 2 bad flag.
import { Command } from 'commander';
import { DOCTOR_DEFAULTS, normalizeDoctorOptions, type RawDoctorFlags } from './options.ts';

/** The subcommand; `run` gets the raw flags (the heavy modules load only when it runs). */
export function doctorCommand(run: (f: RawDoctorFlags) => Promise<void>): Command {
  return new Command('doctor')
    .description("look at this node (run it in the node's netns) and say what is wrong and how to fix it")
    .option('--subnet-file <path>', "weftd's subnet.env", DOCTOR_DEFAULTS.subnetFile)
    .option('--store <spec>', `lease store file:/DIR (default ${DOCTOR_DEFAULTS.store})`)
    .option('--etcd-endpoints <urls>', 'etcd v3 endpoints, comma-separated (selects the etcd store)')
    .option('--etcd-prefix <prefix>', `etcd key prefix (default ${DOCTOR_DEFAULTS.etcdPrefix})`)
    .option('--net-conf <path>', `flannel net-conf.json (default ${DOCTOR_DEFAULTS.netConf}; with etcd, <prefix>/config)`)
    .option('--iface <name|ip>', "uplink interface as weftd's --iface (default: the default route's)")
    .option('--public-ip <ip>', "weftd's --public-ip, when it has one")
    .option('--cni-conf-dir <dir>', 'CNI configuration directory', DOCTOR_DEFAULTS.cniConfDir)
    .option('--cni-bin-dir <dir>', 'CNI plugin directory', DOCTOR_DEFAULTS.cniBinDir)
    .option('--ipam-data-dir <dir>', "host-local's dataDir", DOCTOR_DEFAULTS.ipamDataDir)
    .option('--bridge <name>', 'the pods\' bridge', DOCTOR_DEFAULTS.bridge)
    .option('--metrics-addr <host:port>', "weftd's --metrics-addr: check /healthz and /metrics there")
    .option('--json', 'print one JSON document {"ok", "problems": [{"check", "detail", "fix"}], "checks"}')
    .action(run);
}

/** Runs doctor with the parsed flags and prints; resolves with the exit code. */
export async function runDoctorCommand(f: RawDoctorFlags, io: { out: (s: string) => void }): Promise<number> {
  const opts = normalizeDoctorOptions(f);
  const [{ runDoctor }, { formatReportJson, formatReportTable }] = await Promise.all([import('./doctor.ts'), import('./problem.ts')]);
  const report = await runDoctor(opts);
  io.out(opts.json ? formatReportJson(report) : formatReportTable(report));
  return report.ok ? 0 : 1;
}
