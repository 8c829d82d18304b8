// The executables the standalone file can become, by name. In the source tree this table is empty;
// scripts/build/sea.ts (seaEntriesPlugin) replaces this module with one entry per executable of
// cli/entries.ts: `run` loads (and so starts) it, `warm` loads only the modules its entry
// point imports (for a start-up snapshot: everything but the entry point's own side effects).
export interface SeaEntry {
  run: () => void;
  warm?: () => void;
}

export const SEA_ENTRIES: Readonly<Record<string, SeaEntry>> = {};
