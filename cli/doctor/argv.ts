// doctor's command line in flanneld's syntax and environment, as weftd takes it (runs before
// commander, no netns involved): weftd's flanneldArgv rewrites Go-style flags and appends the
// FLANNELD_* variables of the flags doctor shares with weftd, so that doctor run with a flanneld or
// weftd unit's environment reads the same etcd with the same credentials.
import { flanneldArgv, flanneldEnvName } from '../../agent/inspect.ts';
import { DoctorOptionError } from './options.ts';

/** The flanneld flags doctor takes (the lease source and what finds this node's lease). */
export const DOCTOR_FLANNELD_FLAGS = [
  'etcd-endpoints', 'etcd-prefix', 'etcd-keyfile', 'etcd-certfile', 'etcd-cafile', 'etcd-username', 'etcd-password',
  'iface', 'public-ip', 'subnet-file',
] as const;

/** `args` (after "doctor") with flanneld's syntax rewritten and the FLANNELD_* forms of doctor's flags appended. */
export function doctorArgv(args: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  const picked: Record<string, string | undefined> = {};
  for (const flag of DOCTOR_FLANNELD_FLAGS) {
    const name = flanneldEnvName(flag);
    if (env[name] !== undefined) picked[name] = env[name];
  }
  try {
    return flanneldArgv(args, picked);
  } catch (e) {
    throw new DoctorOptionError((e as Error).message);
  }
}
