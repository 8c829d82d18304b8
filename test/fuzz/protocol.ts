// The line protocol between the fuzz worker (test/fuzz/worker.ts, inside a node netns) and the runner.

/** Marker that starts every reply line on the worker's stdout; any other line is stray plugin output. */
export const REPLY_MARK = '@@weft-fuzz@@ ';

/** One request: run `plugin` with env and stdin (base64). */
export interface WorkerRequest {
  id: string;
  plugin: string;
  env: Record<string, string>;
  stdin: string;
}

/** One reply: the plugin's output, or what escaped runPlugin (which must never throw). */
export interface WorkerReply {
  id: string;
  stdout: string;
  stderr: string;
  exitCode: number;
  ms: number;
  threw?: string;
}
