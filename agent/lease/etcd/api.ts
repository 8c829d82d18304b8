// The few etcd v3 operations the etcd lease store uses, as one small interface: the JSON gateway
// client (gateway-kv.ts, the default) and the gRPC one (grpc.ts, only for a client
// certificate with password auth, which etcd's gateway refuses) both implement it, so the store's
// logic exists once. Revisions and lease IDs are decimal strings (etcd's int64).

/** One key-value of etcd, decoded. */
export interface EtcdKeyValue {
  key: string;
  value: Buffer;
  createRevision: string;
  modRevision: string;
  /** The etcd lease ID the key is bound to; "0" for none. */
  lease: string;
}

/** What a watch delivers; see EtcdApi.watch. */
export interface EtcdWatchHandlers {
  /** A key under the prefix was written ('put') or deleted ('delete'; the value is empty). */
  onEvent(type: 'put' | 'delete', kv: EtcdKeyValue): void;
  /** The watch resumed after a broken connection: events may be missing from what etcd kept, re-list. */
  onReconnected(): void;
  /** etcd ended the watch (start revision compacted, or canceled): start another after a re-list. */
  onCanceled(err: Error): void;
  /** A problem the watch recovers from by itself (connection lost, reconnecting). */
  onError(err: Error): void;
}

/** A running watch; cancel() is idempotent. */
export interface EtcdWatch {
  cancel(): void;
}

/** The operations of the etcd store (each call fails after the client's timeout when etcd does not answer). */
export interface EtcdApi {
  /** The value at `key` (undefined when absent) and the store revision. */
  get(key: string): Promise<{ kv: EtcdKeyValue | undefined; revision: number }>;
  /** Every key starting with `prefix` and the store revision. */
  list(prefix: string): Promise<{ kvs: EtcdKeyValue[]; revision: number }>;
  /** Deletes `key` (no error when absent). */
  delete(key: string): Promise<void>;
  /** Txn: if `key`'s create or mod revision equals `revision`, puts `value` bound to etcd lease `lease`. */
  putIf(key: string, cmp: 'create' | 'mod', revision: string, value: string, lease: string): Promise<{ succeeded: boolean; revision: number }>;
  /** Txn: if `key`'s mod revision equals `revision`, deletes it. */
  deleteIf(key: string, modRevision: string): Promise<boolean>;
  /** Grants an etcd lease; its ID and the TTL etcd chose. */
  leaseGrant(ttlSeconds: number): Promise<{ id: string; ttl: number }>;
  /** One keep-alive round trip: the refreshed TTL in seconds, 0 when etcd no longer knows the lease. */
  leaseKeepAlive(id: string): Promise<number>;
  /** Revokes an etcd lease (its keys go); errors are swallowed: it expires anyway. */
  leaseRevoke(id: string): Promise<void>;
  /** Watches every key under `prefix` from `fromRevision`, reconnecting by itself (see the handlers). */
  watch(prefix: string, fromRevision: number, h: EtcdWatchHandlers): EtcdWatch;
  /** Ends watches and connections. */
  close(): void;
}
