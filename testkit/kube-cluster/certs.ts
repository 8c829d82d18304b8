// The certificates of a test Kubernetes cluster, made with openssl and signed by one CA (runs in the
// root namespace's file system only: openssl touches no network): the apiserver's serving cert, its
// client cert to the kubelets, one client cert per component and node, the service-account key.
// ECDSA P-256 throughout: RSA key generation took up to 49 s on the loaded 2-core machine.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runOk } from '../exec.ts';

/** A client identity: the files of its key and CA-signed certificate. */
export interface ClientCert {
  cert: string;
  key: string;
}

/** The files setupCerts made under its directory. */
export interface ClusterCerts {
  dir: string;
  ca: string;
  caKey: string;
  apiserver: ClientCert;
  /** The apiserver's client cert to the kubelets (CN=kube-apiserver-kubelet-client, O=system:masters). */
  apiserverKubelet: ClientCert;
  admin: ClientCert;
  controllerManager: ClientCert;
  scheduler: ClientCert;
  saKey: string;
  saPub: string;
}

const openssl = (args: string[]): Promise<string> => runOk(['openssl', ...args], { timeoutMs: 60_000 });

/** Makes a key and a certificate for `subj` signed by the CA of `dir` (extensions optional). */
async function signed(dir: string, name: string, subj: string, ext?: string): Promise<ClientCert> {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  await openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', csr, '-subj', subj]);
  const extArgs: string[] = [];
  if (ext !== undefined) {
    const extFile = join(dir, `${name}.ext`);
    writeFileSync(extFile, ext);
    extArgs.push('-extfile', extFile);
  }
  await openssl(['x509', '-req', '-in', csr, '-CA', join(dir, 'ca.crt'), '-CAkey', join(dir, 'ca.key'), '-CAcreateserial', '-out', cert, '-days', '2', ...extArgs]);
  return { cert, key };
}

/**
 * Makes the CA and every control-plane identity in `dir`; `sans` are the apiserver's IP SANs (its
 * underlay address, the `kubernetes` Service's ClusterIP, 127.0.0.1).
 */
export async function setupCerts(dir: string, sans: string[]): Promise<ClusterCerts> {
  const ca = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', caKey, '-out', ca, '-days', '2', '-subj', '/CN=weft-kube-test-ca']);
  const san = `subjectAltName=${[...sans.map((ip) => `IP:${ip}`), 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster.local'].join(',')}\n`;
  const clientExt = 'extendedKeyUsage=clientAuth\n';
  const apiserver = await signed(dir, 'apiserver', '/CN=kube-apiserver', `${san}extendedKeyUsage=serverAuth\n`);
  const apiserverKubelet = await signed(dir, 'apiserver-kubelet-client', '/O=system:masters/CN=kube-apiserver-kubelet-client', clientExt);
  const admin = await signed(dir, 'admin', '/O=system:masters/CN=weft-admin', clientExt);
  const controllerManager = await signed(dir, 'kube-controller-manager', '/CN=system:kube-controller-manager', clientExt);
  const scheduler = await signed(dir, 'kube-scheduler', '/CN=system:kube-scheduler', clientExt);
  const saKey = join(dir, 'sa.key');
  const saPub = join(dir, 'sa.pub');
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', saKey]);
  await openssl(['ec', '-in', saKey, '-pubout', '-out', saPub]);
  return { dir, ca, caKey, apiserver, apiserverKubelet, admin, controllerManager, scheduler, saKey, saPub };
}

/** A node's client cert as the Node authorizer wants it (CN=system:node:<name>, O=system:nodes). */
export function nodeCert(certs: ClusterCerts, node: string): Promise<ClientCert> {
  return signed(certs.dir, `node-${node}`, `/O=system:nodes/CN=system:node:${node}`, 'extendedKeyUsage=clientAuth\n');
}

/** A kubeconfig (the layout `kubectl config` writes) for `server` with a client certificate's files. */
export function formatCertKubeconfig(server: string, ca: string, user: ClientCert): string {
  return [
    'apiVersion: v1', 'clusters:', '- cluster:', `    certificate-authority: ${ca}`, `    server: ${server}`, '  name: test',
    'contexts:', '- context:', '    cluster: test', '    user: user', '  name: test', 'current-context: test', 'kind: Config', 'preferences: {}',
    'users:', '- name: user', '  user:', `    client-certificate: ${user.cert}`, `    client-key: ${user.key}`, '',
  ].join('\n');
}
