// The executables the standalone file can become, by name. In the source tree this table is empty;
// scripts/build/sea.ts (seaEntriesPlugin) replaces this module with one lazy loader per entry of
// scripts/build/entries.ts, so loading a name runs only that executable's modules.
export const SEA_ENTRIES: Readonly<Record<string, () => void>> = {};
