// Issue 18: deploy/weft.yaml's DaemonSet run by podman on a 2-node namespace cluster with a real
// kube-apiserver (the manifest applied by Debian's kubectl, Nodes created with their podCIDRs as
// kube-controller-manager would). The image is built by scripts/image.sh (FROM scratch, nothing
// pulled) into a private podman store. Each node gets a fake root dir standing in for its file
// system: every hostPath volume of the manifest is that dir's path, the ConfigMap volume holds the
// ConfigMap's data, and the plugins run with it as their /run and /var/lib/cni. The init container's command, and the main container's command and args, are
// taken from the manifest as written; weftd authenticates with a service-account token of the
// manifest's ServiceAccount, mounted where a pod has it (the ClusterRole is what it may do).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../../testkit/exec.ts';
import { CniRunner, type ConfList } from '../../../testkit/cni-runner.ts';
import { kubePodCidr, waitFor } from '../../../testkit/cluster.ts';
import { kubeBinariesPresent, KubeApiServer } from '../../../testkit/kube-apiserver.ts';
import { loudSkip, PodmanEnv, podmanSkipReason } from '../../../testkit/podman.ts';
import { nsExec, Topology, type SimNode } from '../../../testkit/topology.ts';
import { pingOnce } from '../cluster/helpers.ts';
import { buildImage, configMapData, hostPathOf, kubectl, kubectlSkipReason, MANIFEST, manifestObject, podSpec, SEA_WEFT, ULIMITS, type PodContainer } from './helpers.ts';

const NET_CONF = JSON.parse(configMapData()['net-conf.json'] ?? '{}') as { Network: string; Backend: { Type: string } };
const NETWORK = NET_CONF.Network;
const P = 'flannel.alpha.coreos.com';
const spec = podSpec();
const [install] = spec.initContainers;
const [weftd] = spec.containers;
const skipReason = kubectlSkipReason() || (kubeBinariesPresent() ? false : 'kube-apiserver not built: run scripts/kube-setup.sh')
  || (existsSync(SEA_WEFT) ? false : 'dist/sea/weft missing: run npm run build') || ((await podmanSkipReason()) ?? false);
const skip = skipReason === false ? false : loudSkip(skipReason);

/** A node's fake root: hostPath P of the manifest is <root>P on the test machine. */
const fakeRoot = (n: SimNode): string => join(n.dir, 'root');

/** podman -v flags for a container's volumeMounts (hostPaths under the node's fake root, the ConfigMap as files). */
function volumeFlags(n: SimNode, c: PodContainer): string[] {
  const flags: string[] = [];
  for (const m of c.volumeMounts ?? []) {
    const vol = spec.volumes.find((v) => v.name === m.name);
    assert.ok(vol, `volume ${m.name} of ${c.name} is not declared`);
    let src: string;
    if (vol.configMap) {
      src = join(n.dir, `configmap-${vol.configMap.name}`);
      mkdirSync(src, { recursive: true });
      for (const [file, text] of Object.entries(configMapData())) writeFileSync(join(src, file), text);
    } else {
      src = join(fakeRoot(n), hostPathOf(spec, m.name));
      const type = (vol.hostPath as { type?: string } | undefined)?.type;
      if (type === 'FileOrCreate') {
        mkdirSync(join(src, '..'), { recursive: true });
        if (!existsSync(src)) writeFileSync(src, '');
      } else {
        mkdirSync(src, { recursive: true });
      }
    }
    flags.push('-v', `${src}:${m.mountPath}${vol.configMap || m.readOnly ? ':ro' : ''}`);
  }
  return flags;
}

/** `podman run` flags giving the container's command (Kubernetes' command = the image's entrypoint) and args. */
function commandOf(c: PodContainer, image: string): string[] {
  assert.ok(c.command, `${c.name} has no command`);
  return ['--entrypoint', JSON.stringify(c.command), image, ...(c.args ?? [])];
}

/**
 * A command prefix running its command in a private mount namespace where the node's fake root
 * is /run (with the machine's /run/netns bound back in, for the namespaces) and /var/lib:
 * the node's file system as the plugins see it, without touching the machine's.
 */
function nodeRootWrap(n: SimNode): string[] {
  const script = [
    'mkdir -p "$1/run/netns" "$1/var/lib/cni"',
    'mount --rbind /run/netns "$1/run/netns"',
    'mount --rbind "$1/run" /run',
    // The whole of /var/lib: a fresh machine has no /var/lib/cni to mount on, and the test must not make one.
    'mount --bind "$1/var/lib" /var/lib',
    'shift',
    'exec "$@"',
  ].join('\n');
  return ['unshare', '--mount', '--propagation', 'private', 'sh', '-ec', script, 'node-root', fakeRoot(n)];
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

void describe('deploy/weft.yaml DaemonSet run by podman', { skip, timeout: 900_000 }, () => {
  const id = `${process.pid}-${randomBytes(3).toString('hex')}`;
  const tag = `weft.local/weft:test-${id}`;
  let topo: Topology;
  let kube: KubeApiServer;
  let env: PodmanEnv;
  let nodes: SimNode[];

  before(async () => {
    assert.ok(install && weftd, 'the DaemonSet has an init container and a container');
    topo = await Topology.create({ nodes: 2 });
    nodes = topo.nodes;
    kube = await KubeApiServer.create(topo);
    for (const n of nodes) await kube.createNode(n.netns, kubePodCidr(NETWORK, n.id));
    const applied = await kubectl(kube, ['apply', '-f', MANIFEST]);
    assert.equal(applied.code, 0, applied.stderr);
    env = new PodmanEnv({ netns: nodes[0]?.netns ?? '', binDir: null });
  }, { timeout: 300_000 });

  after(async () => {
    if (env) {
      await env.podman(['rm', '-f', '-t', '0', '--all'], 60_000);
      await env.podman(['rmi', '-f', tag], 60_000);
      await env.destroy();
    }
    topo?.destroySync();
  });

  void it('scripts/image.sh builds the image FROM scratch: the standalone file, nft, busybox and their libraries only', async () => {
    const imageId = await buildImage(env, tag);
    assert.match(imageId, /^[0-9a-f]{64}$/);
    const [img] = JSON.parse(await env.must(['image', 'inspect', tag])) as Array<{ RootFS: { Layers: string[] } }>;
    assert.equal(img?.RootFS.Layers.length, 1, 'one layer: nothing below it');
    // Every regular file of the image, from an export of a container made from it.
    await env.must(['create', '--name', `weft-files-${id}`, tag]);
    const tarFile = join(env.dir, 'export.tar');
    await env.must(['export', '-o', tarFile, `weft-files-${id}`]);
    await env.must(['rm', `weft-files-${id}`]);
    const list = await run(['tar', '-tvf', tarFile]);
    const files = list.stdout.split('\n').filter((l) => l.startsWith('-')).map((l) => l.split(/\s+/).pop() ?? '').sort();
    const others = files.filter((f) => !['opt/weft/weft', 'usr/sbin/nft', 'bin/busybox'].includes(f) && !/^(lib|lib64)\/.*\.so[.0-9]*$/.test(f));
    assert.deepEqual(others, [], 'files beyond weft, nft, busybox and shared libraries');
    for (const f of ['opt/weft/weft', 'usr/sbin/nft', 'bin/busybox', 'lib64/ld-linux-x86-64.so.2']) assert.ok(files.includes(f), `${f} missing`);
    const version = await env.podman(['run', '--rm', '--network', 'none', ...ULIMITS, tag]);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^weftd \d+\.\d+\.\d+/);
    const nft = await env.podman(['run', '--rm', '--network', 'none', ...ULIMITS, tag, '/usr/sbin/nft', '--version']);
    assert.equal(nft.code, 0, nft.stderr);
  });

  void it('the init container installs the standalone file, its plugin links and the ConfigMap\'s conflist; a rerun leaves the same', async () => {
    assert.ok(install);
    const n = nodes[0];
    assert.ok(n);
    const bin = join(fakeRoot(n), hostPathOf(spec, 'cni-plugin'));
    const conf = join(fakeRoot(n), hostPathOf(spec, 'cni'));
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'macvlan'), '#!/bin/sh\necho someone else\n', { mode: 0o755 });
    const runInstall = (): Promise<{ code: number; stderr: string }> =>
      env.podman(['run', '--rm', '--name', `weft-install-${id}`, '--network', 'none', ...ULIMITS, ...volumeFlags(n, install), ...commandOf(install, tag)]);
    const first = await runInstall();
    assert.equal(first.code, 0, first.stderr);
    const check = (): number => {
      const exe = statSync(join(bin, 'weft'));
      assert.equal(exe.mode & 0o777, 0o755);
      assert.equal(sha256(join(bin, 'weft')), sha256(SEA_WEFT), 'weft is a byte copy of dist/sea/weft');
      for (const p of ['flannel', 'bridge', 'host-local', 'portmap', 'loopback', 'bandwidth']) assert.equal(statSync(join(bin, p)).ino, exe.ino, `${p} is a hard link to weft`);
      assert.equal(exe.nlink, 7);
      assert.deepEqual(readdirSync(bin).sort(), ['bandwidth', 'bridge', 'flannel', 'host-local', 'loopback', 'macvlan', 'portmap', 'weft'], 'no temp file left, nothing else');
      assert.equal(readFileSync(join(bin, 'macvlan'), 'utf8'), '#!/bin/sh\necho someone else\n');
      assert.deepEqual(readdirSync(conf), ['10-flannel.conflist']);
      assert.equal(readFileSync(join(conf, '10-flannel.conflist'), 'utf8'), configMapData()['cni-conf.json']);
      return exe.ino;
    };
    const ino1 = check();
    const second = await runInstall();
    assert.equal(second.code, 0, second.stderr);
    assert.notEqual(check(), ino1, 'the rerun renamed a new copy over the old one');
    const v = await run([join(bin, 'flannel')], { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', CNI_COMMAND: 'VERSION' } });
    assert.equal(v.code, 0, v.stderr);
    assert.ok((JSON.parse(v.stdout) as { supportedVersions: string[] }).supportedVersions.includes('1.0.0'));
  });

  void it('weftd runs in its container on each node\'s network namespace and the installed plugins connect pods across the nodes', async () => {
    assert.ok(install && weftd);
    // A service-account token as the kubelet would project it, for the manifest's ServiceAccount.
    const ns = manifestObject('DaemonSet').metadata.namespace ?? 'default';
    assert.ok(spec.serviceAccountName, 'the DaemonSet names its ServiceAccount');
    const tr = await kube.call('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${spec.serviceAccountName}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } }) as { status: { token: string } };
    const saDir = join(topo.dir, 'serviceaccount');
    mkdirSync(saDir, { recursive: true });
    writeFileSync(join(saDir, 'token'), tr.status.token);
    writeFileSync(join(saDir, 'ca.crt'), readFileSync(join(kube.dir, 'ca.crt')));
    writeFileSync(join(saDir, 'namespace'), ns);
    const caps = weftd.securityContext?.capabilities?.add ?? [];
    assert.ok(weftd.securityContext?.privileged !== true, 'the manifest runs weftd unprivileged');

    const pods: Array<{ node: SimNode; netns: string; path: string; ip: string; containerId: string; runner: CniRunner; ipamDir: string }> = [];
    const names: string[] = [];
    for (const n of nodes) {
      if (n !== nodes[0]) {
        const r = await env.podman(['run', '--rm', '--network', 'none', ...ULIMITS, ...volumeFlags(n, install), ...commandOf(install, tag)]);
        assert.equal(r.code, 0, r.stderr);
      }
      const envFlags = (weftd.env ?? []).flatMap((e) => {
        const field = e.valueFrom?.fieldRef?.fieldPath;
        const value = field === 'spec.nodeName' ? n.netns : field === 'metadata.name' ? `weft-${n.id}` : field === 'metadata.namespace' ? ns : e.value;
        assert.ok(value !== undefined, `env ${e.name}: unknown source`);
        return ['-e', `${e.name}=${value}`];
      });
      const name = `weftd-${id}-n${n.id}`;
      names.push(name);
      await env.must(['run', '-d', '--name', name, '--network', `ns:${n.path}`, ...ULIMITS, ...caps.flatMap((c) => ['--cap-add', c]),
        ...envFlags, '-e', `KUBERNETES_SERVICE_HOST=${kube.ip}`, '-e', 'KUBERNETES_SERVICE_PORT=6443',
        '-v', `${saDir}:/var/run/secrets/kubernetes.io/serviceaccount:ro`, ...volumeFlags(n, weftd), ...commandOf(weftd, tag)]);
      const subnetEnv = join(fakeRoot(n), hostPathOf(spec, 'run'), 'subnet.env');
      await waitFor(`weftd's subnet.env on ${n.netns}`, async () => {
        const st = await env.podman(['inspect', '--format', '{{.State.Running}}', name]);
        if (st.stdout.trim() !== 'true') throw new Error(`weftd container on ${n.netns} stopped: ${(await env.podman(['logs', name])).stderr.slice(-3000)}`);
        return existsSync(subnetEnv);
      }, 120_000, 250);
      assert.match(readFileSync(subnetEnv, 'utf8'), new RegExp(`FLANNEL_SUBNET=${kubePodCidr(NETWORK, n.id).replace('.0/24', '.1/24').replace(/\./g, '\\.')}`));

      // The installed conflist as the init container wrote it, unchanged: the plugins run where the
      // node's fake root is the machine's /run and /var/lib/cni (nodeRootWrap), so their default
      // paths (/run/flannel/subnet.env, /var/lib/cni/flannel, /var/lib/cni/networks) are the node's.
      const conf = JSON.parse(readFileSync(join(fakeRoot(n), hostPathOf(spec, 'cni'), '10-flannel.conflist'), 'utf8')) as ConfList;
      const ipamDir = join(fakeRoot(n), 'var/lib/cni/networks', conf.name);
      const runner = new CniRunner(conf, { binDirs: [join(fakeRoot(n), hostPathOf(spec, 'cni-plugin'))], nodeNetns: n.netns, wrap: nodeRootWrap(n) });
      const pod = await topo.addPod(n, 1);
      const containerId = `${topo.prefix}-${pod.name}`;
      const res = await runner.add({ containerId, netns: pod.path, ifName: 'eth0' });
      const ip = (res['ips'] as Array<{ address: string }> | undefined)?.[0]?.address.split('/')[0];
      assert.ok(ip, `no pod address: ${JSON.stringify(res)}`);
      pods.push({ node: n, netns: pod.netns, path: pod.path, ip, containerId, runner, ipamDir });
    }

    for (const n of nodes) {
      const node = await kube.call('GET', `/api/v1/nodes/${n.netns}`) as { metadata: { annotations: Record<string, string> }; status: { conditions?: Array<{ type: string; status: string }> } };
      const a = node.metadata.annotations;
      assert.equal(a[`${P}/public-ip`], n.ip, `${n.netns} public-ip`);
      assert.equal(a[`${P}/backend-type`], NET_CONF.Backend.Type);
      assert.equal(a[`${P}/kube-subnet-manager`], 'true');
      assert.equal(node.status.conditions?.find((x) => x.type === 'NetworkUnavailable')?.status, 'False');
      // --ip-masq of the manifest: weftd ran the image's nft in the node's namespace.
      const nft = await nsExec(n.netns, ['nft', 'list', 'ruleset']);
      assert.match(nft.stdout, /masquerade/, `${n.netns}: no masquerade rule`);
    }
    const [a, b] = pods;
    assert.ok(a && b);
    await waitFor('the pods reach each other across the nodes', async () => (await pingOnce(a.netns, b.ip)) && (await pingOnce(b.netns, a.ip)), 20_000, 200);

    // A rollout or a pod deletion: the kubelet sends SIGTERM to the container's PID 1, weftd itself.
    for (const name of names) {
      const stop = await env.podman(['stop', '-t', '20', name], 60_000);
      assert.equal(stop.code, 0, stop.stderr);
      assert.equal((await env.must(['inspect', '--format', '{{.State.ExitCode}}', name])).trim(), '0', `${name}: weftd did not exit 0 on SIGTERM`);
    }
    // vxlan and host-gw live in the kernel; udp forwards in weftd itself and stops with it.
    if (NET_CONF.Backend.Type !== 'udp') assert.ok(await pingOnce(a.netns, b.ip), 'the data plane stays while weftd is away (as with flanneld)');
    // The pod started again (the kubelet restarts a failed container): same subnet, same data plane.
    const metricsAddr = weftd.args?.[(weftd.args.indexOf('--metrics-addr')) + 1];
    assert.ok(weftd.args?.includes('--metrics-addr') && metricsAddr, 'weftd\'s args give --metrics-addr');
    const envBefore = nodes.map((n) => readFileSync(join(fakeRoot(n), hostPathOf(spec, 'run'), 'subnet.env'), 'utf8'));
    for (const [i, name] of names.entries()) {
      await env.must(['start', name]);
      const n = nodes[i];
      assert.ok(n);
      await waitFor(`weftd healthy again on ${n.netns}`, async () => (await nsExec(n.netns, ['curl', '-fsS', '--max-time', '1', `http://${metricsAddr}/healthz`])).code === 0, 120_000, 250);
    }
    assert.deepEqual(nodes.map((n) => readFileSync(join(fakeRoot(n), hostPathOf(spec, 'run'), 'subnet.env'), 'utf8')), envBefore);
    await waitFor('the pods reach each other after the restart', async () => (await pingOnce(a.netns, b.ip)) && (await pingOnce(b.netns, a.ip)), 20_000, 200);
    // DEL through the installed plugins releases each pod's address.
    for (const p of pods) {
      assert.ok(existsSync(join(p.ipamDir, p.ip)), `${p.node.netns}: host-local holds no ${p.ip}`);
      await p.runner.del({ containerId: p.containerId, netns: p.path, ifName: 'eth0' });
      assert.deepEqual(readdirSync(p.ipamDir).filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(f)), [], `${p.node.netns}: an address is still allocated`);
    }
  });
});
