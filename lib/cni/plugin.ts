// The plugin contract seen by the skeleton: handlers per CNI_COMMAND and the arguments they get.
import type { Command, NetConf, Result } from './types.ts';

/** An environment: process.env, or the one a delegating plugin passes on. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Everything a handler needs, decoded and checked by the skeleton (runs in the runtime's netns). */
export interface CmdArgs {
  command: Exclude<Command, 'VERSION'>;
  /** CNI_CONTAINERID, validated ('' for GC/STATUS when the runtime sends none). */
  containerId: string;
  /** CNI_NETNS as given ('' when absent, e.g. DEL after the netns is gone); may not exist. */
  netns: string;
  /** CNI_IFNAME, validated ('' for GC/STATUS when absent). */
  ifName: string;
  /** Raw CNI_ARGS; plugins parse it with parseCniArgs and their own known keys. */
  args: string;
  /** CNI_PATH split on ':' with empty entries dropped. */
  path: string[];
  /** The exact stdin bytes (delegation passes them on unchanged). */
  stdinData: Buffer;
  /** Parsed stdin: a JSON object; the plugin checks it against its own schema. */
  config: NetConf;
  /** The config's cniVersion ("0.1.0" when the config has none, as the reference decodes it). */
  cniVersion: string;
  /** config.prevResult converted to the internal form, when present. */
  prevResult?: Result;
  /** The whole environment, for delegation (only CNI_COMMAND changes). */
  env: Env;
}

/** A handler that produces a result (ADD). */
export type ResultHandler = (args: CmdArgs) => Result | Promise<Result>;
/** A handler with no output on success (DEL, CHECK, GC, STATUS). */
export type VoidHandler = (args: CmdArgs) => void | Promise<void>;

/** A plugin: its identity and handlers. Missing gc/status handlers succeed; missing add/del/check fail with code 4. */
export interface Plugin {
  name: string;
  version: string;
  /** CNI versions this plugin accepts (a subset of SUPPORTED_VERSIONS). */
  supportedVersions: readonly string[];
  add?: ResultHandler;
  /** Checks every input ADD will read, changing nothing; a delegating plugin runs it (in-process) before its own first change. */
  validateAdd?: VoidHandler;
  del?: VoidHandler;
  check?: VoidHandler;
  status?: VoidHandler;
  gc?: VoidHandler;
  /**
   * True when prevResult is no field of this plugin's config in the reference (IPAM plugins): one the
   * skeleton cannot read is then ignored instead of refused (code 6).
   */
  prevResultOptional?: boolean;
  /** Text printed on stderr when CNI_COMMAND is unset; defaults to "<name> <version>". */
  about?: string;
}

/** Injected I/O for pluginMain (tests and in-process use); each field defaults to the process's own. */
export interface PluginIo {
  env: Env;
  stdin: () => Buffer;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  exit: (code: number) => void;
}

/** What runPlugin produced: the stdout document (or ''), any stderr text, and the exit code. */
export interface PluginOutput {
  stdout: string;
  stderr: string;
  exitCode: 0 | 1;
}
