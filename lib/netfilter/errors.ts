// Typed errors of the nftables layer; nft's stderr is kept so callers (and CNI error details) can show it.

/** Why an nft operation failed. */
export type NftErrorKind =
  | 'invalid' // a value was refused before anything reached nft
  | 'spawn' // nft (or nsenter) could not be started
  | 'timeout' // nft was killed after timeoutMs
  | 'failed'; // nft ran and exited non-zero (the transaction was rolled back by the kernel)

/** Error from building or applying an nft transaction; `stderr` and `script` are kept verbatim. */
export class NftError extends Error {
  override readonly name = 'NftError';
  readonly kind: NftErrorKind;
  readonly exitStatus: number | null;
  readonly stderr: string;
  readonly script: string;

  constructor(
    kind: NftErrorKind,
    message: string,
    extra: { exitStatus?: number | null; stderr?: string; script?: string; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.kind = kind;
    this.exitStatus = extra.exitStatus ?? null;
    this.stderr = extra.stderr ?? '';
    this.script = extra.script ?? '';
  }

  /** The CNI code this failure means to a runtime: 11 (try again later) when nft stalled and was killed. */
  get cniCode(): number | undefined {
    return this.kind === 'timeout' ? 11 : undefined;
  }

  /** True when nft reported ENOENT (missing table, chain, set or element). */
  get isNotFound(): boolean {
    return this.kind === 'failed' && /No such file or directory/.test(this.stderr);
  }

  /** True when nft reported EEXIST (e.g. a map key already bound to other data). */
  get isExists(): boolean {
    return this.kind === 'failed' && /File exists/.test(this.stderr);
  }
}

/** Builds the 'invalid' error for a refused value; the message names the field and the bad value. */
export function invalidValue(field: string, value: unknown, why: string): NftError {
  return new NftError('invalid', `nftables: invalid ${field} ${JSON.stringify(value)}: ${why}`);
}
