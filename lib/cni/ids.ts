// Validation of names that become paths or kernel names: container IDs, interface names, network names.
// Values from the environment fail with code 4 (invalid env), values from a config with code 7.
import { ErrorCode, CniError } from './errors.ts';
import { hasNameBreakingChar, isPlainName } from '../text/name-chars.ts';
import { hasLoneSurrogate } from '../text/surrogates.ts';

/** Where a value came from: decides the error code (4 for env, 7 for config) and its label. */
export type IdSource = 'env' | 'config';

/** Options: the source (default per validator) and the label used in the message. */
export interface IdOptions {
  source?: IdSource;
  field?: string;
}

// Same charset as the reference (pkg/utils ValidateContainerID; isPlainName): starts alphanumeric, then
// alphanumerics, '_', '.', '-'. Excludes '/', NUL and whitespace by construction.
const MAX_CONTAINER_ID = 1024;
const MAX_NETWORK_NAME = 255; // NAME_MAX: the network name is one path component.
const IFNAMSIZ = 16; // include/uapi/linux/if.h; names hold at most IFNAMSIZ-1 bytes plus NUL.

function fail(source: IdSource, field: string, why: string, value: string): never {
  const code = source === 'env' ? ErrorCode.invalidEnv : ErrorCode.invalidConfig;
  const shown = JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}...` : value);
  throw new CniError(code, `invalid ${field}`, `${shown} ${why}`);
}

/** A container ID (CNI_CONTAINERID by default): charset as the reference, at most 1024 chars. */
export function validateContainerId(id: string | undefined, opts: IdOptions = {}): string {
  const source = opts.source ?? 'env';
  const field = opts.field ?? (source === 'env' ? 'CNI_CONTAINERID' : 'containerID');
  if (id === undefined || id === '') return fail(source, field, 'is empty', '');
  if (id.length > MAX_CONTAINER_ID) return fail(source, field, `is longer than ${MAX_CONTAINER_ID} characters`, id);
  if (!isPlainName(id)) {
    return fail(source, field, 'must start with a letter or digit and contain only letters, digits, "_", "." and "-"', id);
  }
  return id;
}

/**
 * An interface name (CNI_IFNAME by default), as the kernel's dev_valid_name (net/core/dev.c):
 * non-empty, at most IFNAMSIZ-1 bytes, not "." or "..", no '/', ':' or whitespace. We also refuse
 * every other control character (NUL included) so names stay printable in logs and paths.
 */
export function validateIfName(name: string | undefined, opts: IdOptions = {}): string {
  const source = opts.source ?? 'env';
  const field = opts.field ?? (source === 'env' ? 'CNI_IFNAME' : 'ifname');
  if (name === undefined || name === '') return fail(source, field, 'is empty', '');
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > IFNAMSIZ - 1) return fail(source, field, `is ${bytes} bytes, the limit is ${IFNAMSIZ - 1}`, name);
  if (name === '.' || name === '..') return fail(source, field, 'is not a valid interface name', name);
  if (hasNameBreakingChar(name)) return fail(source, field, "must not contain '/', ':', whitespace or control characters", name);
  // '%' makes the kernel treat the name as a template ("eth%d", dev_get_valid_name in net/core/dev.c):
  // a fixed name with it is EINVAL or, worse, a different name than asked.
  if (name.includes('%')) return fail(source, field, "must not contain '%' (the kernel reads it as a name template)", name);
  // A lone surrogate (possible in a JSON config) is sent as U+FFFD: the link would get another name.
  if (hasLoneSurrogate(name)) return fail(source, field, 'is not well-formed Unicode', name);
  return name;
}

/** A network name (config "name"): one directory name under the IPAM data dir, so no path tricks. */
export function validateNetworkName(name: string | undefined, opts: IdOptions = {}): string {
  const source = opts.source ?? 'config';
  const field = opts.field ?? 'name';
  if (name === undefined || name === '') return fail(source, field, 'is empty', '');
  if (name.length > MAX_NETWORK_NAME) return fail(source, field, `is longer than ${MAX_NETWORK_NAME} characters`, name);
  // isPlainName already excludes '/', NUL and a leading '.', so "..", ".", "../x" cannot pass.
  if (!isPlainName(name)) {
    return fail(source, field, 'must start with a letter or digit and contain only letters, digits, "_", "." and "-"', name);
  }
  return name;
}
