// The namespace layer: open network namespaces, run synchronous work inside them, per-netns sysctls.
export { NetnsHandle, NotNetnsError, currentNetnsPath, isOwnNetns, isSameNetns, openNetns } from './handle.ts';
export { withNetns } from './with-netns.ts';
export { ensureSysctl, readSysctl, validateSysctlName, writeSysctl } from './sysctl.ts';
