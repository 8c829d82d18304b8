// Build-time only (the host's root namespace, a temp dir of the build machine): calls the Node
// functions a plugin's start and an ADD or DEL call for the first time (fs, buffer, events, vm,
// path), so that V8 has compiled them when the start-up snapshot is taken; a start from the snapshot
// then runs their bytecode instead of compiling them. The list is what `node --log-function-events`
// showed a flannel ADD and DEL compile beyond an empty script's. Touches nothing outside its temp dir.
import { EventEmitter, once } from 'node:events';
import {
  accessSync, closeSync, existsSync, fstatSync, fsyncSync, linkSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync,
  readFileSync, readSync, realpathSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync, writeSync, constants,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, isAbsolute } from 'node:path';
import { Script } from 'node:vm';

/** Runs every warmed function once on a scratch directory, then removes it. Throws only if the temp dir cannot be made. */
export function warmNodeInternals(): void {
  const dir = mkdtempSync(`${tmpdir()}/weft-warm-`);
  try {
    const file = `${dir}/a`;
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    writeSync(fd, Buffer.from('10.0.0.1\nx', 'utf8'));
    fsyncSync(fd);
    closeSync(fd);
    writeFileSync(`${dir}/b`, 'text', { mode: 0o600 });
    linkSync(file, `${dir}/c`);
    renameSync(`${dir}/c`, `${dir}/d`);
    accessSync(dir, constants.W_OK);
    mkdirSync(`${dir}/e/f`, { recursive: true, mode: 0o700 });
    const rfd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    const st = fstatSync(rfd);
    const buf = Buffer.allocUnsafe(st.size);
    readSync(rfd, buf, 0, st.size, 0);
    closeSync(rfd);
    readFileSync(file, 'utf8');
    readFileSync(file);
    statSync(file).isFile();
    lstatSync(dir).isDirectory();
    lstatSync(`${dir}/missing`, { throwIfNoEntry: false });
    statSync(`${dir}/missing`, { throwIfNoEntry: false });
    existsSync(`${dir}/missing`);
    try {
      readFileSync(`${dir}/missing`, 'utf8');
    } catch (e) {
      void (e as NodeJS.ErrnoException).code;
    }
    readdirSync(dir);
    readdirSync(dir, { withFileTypes: true }).map((d) => d.isFile());
    realpathSync(dir);
    unlinkSync(`${dir}/d`);
    // Kept in `sink` so that every call counts as used.
    const sink: unknown[] = [
      Buffer.alloc(4).toString('hex'), buf.subarray(0, 2).toString('utf8'), buf.slice(1).indexOf('\n'), Buffer.byteLength('x', 'utf8'),
      Buffer.from(new ArrayBuffer(8)).length, Buffer.allocUnsafe(3).write('ab', 'latin1'), Buffer.isEncoding('utf8'), basename(file), isAbsolute(file),
    ];
    sink.length = 0;
    new Script('0', { filename: `${dir}/s.js` }).runInThisContext();
    const ee = new EventEmitter();
    const wait = once(ee, 'x');
    ee.emit('x');
    void wait;
    const onExit = (): void => undefined;
    process.once('beforeExit', onExit);
    process.removeListener('beforeExit', onExit);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
