// The addon bytes a bundle carries. In the source tree this is null and lib/sys loads the node-gyp
// build; scripts/build/addon.ts (embedAddonPlugin) replaces this module's contents at bundle time.
import type { EmbeddedAddon } from './loader.ts';

export const EMBEDDED_ADDON: EmbeddedAddon | null = null;
