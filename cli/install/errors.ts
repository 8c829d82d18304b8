// The installer's option error: the CLI prints its message and exits 2 (nothing written).

/** Raised for a bad option; the CLI prints the message and exits 2. */
export class InstallOptionError extends Error {}
