// weft's release version, printed by `--version` of weft and weftd (the plugins print theirs in the
// CNI about text). Kept equal to package.json's "version" by test/unit/lib/version.test.ts. Pure.

/** The version of this build's source. */
export const WEFT_VERSION = '0.1.0';
