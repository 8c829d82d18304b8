// Which Node this weftd runs on, found as flanneld finds it (pkg/subnet/kube/kube.go): NODE_NAME
// when set, else the spec.nodeName of its own pod, read from POD_NAMESPACE/POD_NAME (kube-flannel.yml
// passes both from the downward API). Runs anywhere (API calls only).

/** Where the node name comes from: given, or the pod to look up. */
export interface NodeNameSource {
  nodeName?: string;
  podNamespace?: string;
  podName?: string;
}

/** Checks that a source can name the node without the API; throws with flanneld's wording otherwise. */
export function checkNodeNameSource(s: NodeNameSource): void {
  if (s.nodeName) return;
  if (!s.podName || !s.podNamespace) throw new Error('--kube-subnet-mgr needs the node name: set NODE_NAME, or POD_NAME and POD_NAMESPACE (env variables POD_NAME and POD_NAMESPACE must be set)');
}

/** The API calls needed here (KubeClient.call). */
export type KubeCall = (method: string, path: string) => Promise<unknown>;

/** The node name: NODE_NAME, else GET pods/POD_NAME in POD_NAMESPACE -> spec.nodeName. */
export async function resolveNodeName(s: NodeNameSource, call: KubeCall): Promise<string> {
  checkNodeNameSource(s);
  if (s.nodeName) return s.nodeName;
  const ns = s.podNamespace as string;
  const name = s.podName as string;
  let pod: { spec?: { nodeName?: unknown } } | null;
  try {
    pod = await call('GET', `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}`) as { spec?: { nodeName?: unknown } } | null;
  } catch (e) {
    throw new Error(`error retrieving pod spec for '${ns}/${name}': ${(e as Error).message}`, { cause: e });
  }
  const nodeName = pod?.spec?.nodeName;
  if (typeof nodeName !== 'string' || nodeName === '') throw new Error(`node name not present in pod spec '${ns}/${name}'`);
  return nodeName;
}
