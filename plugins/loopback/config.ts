// Parses the loopback network configuration (the schema only requires the spec's common keys).
import { validateConfig } from '../../lib/cni/validate.ts';
import type { NetConf } from '../../lib/cni/types.ts';
import { validate } from '../../gen/validators/loopback.js';

/** Validates the loopback config against its generated JSON Schema validator; code 7 on failure. */
export function parseLoopbackConfig(config: unknown): NetConf {
  return validateConfig<NetConf>(validate, config);
}
