// EndpointSlices by the Service they belong to (the kubernetes.io/service-name label), for the
// proxy's renders. Nearly every Service has one slice: it is kept as the entry itself, and only a
// Service with several gets a Map (at 10,000 Services a Map per Service was ~5 MiB of the heap). Pure.
import { SERVICE_NAME_LABEL, type EndpointSlice } from './types.ts';

/** The Service key (`namespace/name`) a slice belongs to; undefined without the label. */
export function sliceService(s: EndpointSlice): string | undefined {
  const n = s.metadata.labels?.[SERVICE_NAME_LABEL];
  return n === undefined || n === '' ? undefined : `${s.metadata.namespace ?? ''}/${n}`;
}

function sliceKey(s: EndpointSlice): string {
  return `${s.metadata.namespace ?? ''}/${s.metadata.name}`;
}

const NONE: readonly EndpointSlice[] = Object.freeze([]);

/** Slices by Service key (see the module comment). */
export class SliceIndex {
  private readonly bySvc = new Map<string, EndpointSlice | Map<string, EndpointSlice>>();

  /** Records `s` under its Service (replacing the slice of the same name); returns the Service key, undefined when it has none. */
  add(s: EndpointSlice): string | undefined {
    const svc = sliceService(s);
    if (svc === undefined) return undefined;
    const cur = this.bySvc.get(svc);
    if (cur === undefined) this.bySvc.set(svc, s);
    else if (cur instanceof Map) cur.set(sliceKey(s), s);
    else if (sliceKey(cur) === sliceKey(s)) this.bySvc.set(svc, s);
    else this.bySvc.set(svc, new Map([[sliceKey(cur), cur], [sliceKey(s), s]]));
    return svc;
  }

  /** Forgets the slice of `s`'s name under `s`'s Service; returns the Service key, undefined when it has none. */
  remove(s: EndpointSlice): string | undefined {
    const svc = sliceService(s);
    if (svc === undefined) return undefined;
    const cur = this.bySvc.get(svc);
    const k = sliceKey(s);
    if (cur instanceof Map) {
      cur.delete(k);
      if (cur.size <= 1) {
        const [only] = cur.values();
        if (only === undefined) this.bySvc.delete(svc);
        else this.bySvc.set(svc, only);
      }
    } else if (cur !== undefined && sliceKey(cur) === k) this.bySvc.delete(svc);
    return svc;
  }

  /** The slices of Service `svc` (namespace/name). */
  of(svc: string): readonly EndpointSlice[] {
    const cur = this.bySvc.get(svc);
    return cur === undefined ? NONE : cur instanceof Map ? [...cur.values()] : [cur];
  }

  /** Services with at least one slice. */
  get size(): number {
    return this.bySvc.size;
  }

  clear(): void {
    this.bySvc.clear();
  }
}
