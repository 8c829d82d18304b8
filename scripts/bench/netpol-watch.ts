// The netpol bench's own watcher of the API (runs curl in the API server's netns; the bench process
// reads its stream): a watch with no resourceVersion, which starts with the collection's current
// objects (ADDED events, the list) and then streams changes, started before any timed change, so that a change can be timed from the moment its watch event reaches a client, as it
// reaches weftd's or kube-router's informer, leaving out the API call's own cost (curl's spawn, TLS,
// etcd's write) that "from the API call" includes.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster } from '../../testkit/cluster.ts';

/** One watch event as the stream carried it, with the wall clock (ms) its line reached this process. */
export interface SeenEvent {
  at: number;
  type: string;
  obj: { metadata?: { name?: string; namespace?: string; labels?: Record<string, string> }; status?: { podIP?: string } };
}

type Kube = NonNullable<Cluster['kube']>;

/** A running list+watch of one collection; `when` resolves with the time of the first event matching a predicate, registered before the change. */
export class BenchWatch {
  private readonly waiters: { pred: (e: SeenEvent) => boolean; done: (t: number) => void }[] = [];
  private buf = '';
  private closed = false;
  /** Response headers (curl -i) not yet all read: events follow them. */
  private headers = true;
  private opened: (status: string) => void = () => {};
  /** Resolves with the response's status line once the server answered the watch. */
  readonly ready = new Promise<string>((r) => { this.opened = r; });

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      // The time of the chunk's arrival: every event in it reached this process then.
      const at = Date.now();
      this.buf += chunk;
      if (this.headers) {
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        this.opened(this.buf.slice(0, this.buf.indexOf('\r\n')));
        this.headers = false;
        this.buf = this.buf.slice(end + 4);
      }
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        if (line.trim() === '') continue;
        let ev: { type?: string; object?: SeenEvent['obj'] };
        try {
          ev = JSON.parse(line) as typeof ev;
        } catch {
          continue;
        }
        this.deliver({ at, type: ev.type ?? '', obj: ev.object ?? {} });
      }
    });
    child.on('exit', () => { this.closed = true; this.opened('closed'); for (const w of this.waiters.splice(0)) w.done(NaN); });
  }

  /**
   * Watches `path` (a collection, not empty) from its current state; resolves once the stream is open.
   * Not from a list's resourceVersion: the API server sends a watch's headers with its first event,
   * so a watch from "now" on a quiet collection would show no sign of being open.
   */
  static async start(kube: Kube, path: string): Promise<BenchWatch> {
    const token = /token:\s*(\S+)/.exec(readFileSync(kube.kubeconfig, 'utf8'))?.[1] ?? '';
    const url = `${kube.url}${path}?watch=1&timeoutSeconds=3600`;
    const child = spawn('ip', ['netns', 'exec', kube.netns, 'curl', '-sSNi', '--cacert', join(kube.dir, 'ca.crt'), '-H', `Authorization: Bearer ${token}`, url], { stdio: ['ignore', 'pipe', 'ignore'] });
    const w = new BenchWatch(child);
    const status = await Promise.race([w.ready, new Promise<string>((r) => setTimeout(() => r('no answer within 20 s'), 20_000).unref())]);
    if (!/^HTTP\/\S+ 200/.test(status)) {
      w.close();
      throw new Error(`bench watch of ${path}: ${status}`);
    }
    return w;
  }

  /** The wall clock of the first event from now on that satisfies `pred`; NaN when the stream ends first or nothing comes within `timeoutMs`. */
  when(pred: (e: SeenEvent) => boolean, timeoutMs = 30_000): Promise<number> {
    if (this.closed) return Promise.resolve(NaN);
    return new Promise((resolve) => {
      const w = { pred, done: (t: number) => { clearTimeout(timer); resolve(t); } };
      const timer = setTimeout(() => { const i = this.waiters.indexOf(w); if (i >= 0) this.waiters.splice(i, 1); resolve(NaN); }, timeoutMs);
      this.waiters.push(w);
    });
  }

  private deliver(e: SeenEvent): void {
    for (let i = 0; i < this.waiters.length;) {
      const w = this.waiters[i];
      if (w !== undefined && w.pred(e)) {
        this.waiters.splice(i, 1);
        w.done(e.at);
      } else i++;
    }
  }

  /** Ends the stream. */
  close(): void {
    this.child.kill('SIGTERM');
  }
}
