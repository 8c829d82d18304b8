// The bound on every wait for something outside the plugin (a lock held by another process, an nft
// child that hangs): past it the plugin answers code 11 (try again later) instead of hanging the runtime.
import type { Env } from './plugin.ts';

/** Environment key holding the bound in milliseconds; documented in docs/security.md. */
export const STALL_TIMEOUT_ENV = 'WEFT_STALL_TIMEOUT_MS';
/** Default bound per wait: well inside kubelet's and containerd's own CNI deadlines. */
export const DEFAULT_STALL_TIMEOUT_MS = 10_000;

/** The bound from `env` (any process, any netns); a missing, non-numeric or non-positive value means the default. */
export function stallTimeoutMs(env: Env): number {
  const raw = env[STALL_TIMEOUT_ENV];
  const n = raw === undefined || raw === '' ? NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_STALL_TIMEOUT_MS;
}
