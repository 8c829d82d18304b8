// The addon bytes a bundle carries. In the source tree this is null and lib/sys loads the node-gyp
// build; scripts/build/addon.ts (embedAddonPlugin) replaces this module's contents at bundle time.
export const EMBEDDED_ADDON: { sha256: string; base64: string } | null = null;
