import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SliceIndex, sliceService } from '../../../../agent/services/slice-index.ts';
import { SERVICE_NAME_LABEL, type EndpointSlice } from '../../../../agent/services/types.ts';

const slice = (name: string, svc: string | undefined, rv = '1', ns = 'default'): EndpointSlice =>
  ({ metadata: { name, namespace: ns, resourceVersion: rv, ...(svc === undefined ? {} : { labels: { [SERVICE_NAME_LABEL]: svc } }) }, addressType: 'IPv4', endpoints: [] }) as unknown as EndpointSlice;
const names = (xs: readonly EndpointSlice[]) => xs.map((s) => `${s.metadata.name}@${s.metadata.resourceVersion}`).sort();

test('SliceIndex: one slice, its replacement, a second and third slice, then removals back to none', () => {
  const ix = new SliceIndex();
  assert.equal(ix.add(slice('a-1', 'a')), 'default/a');
  assert.deepEqual(names(ix.of('default/a')), ['a-1@1']);
  ix.add(slice('a-1', 'a', '2'));
  assert.deepEqual(names(ix.of('default/a')), ['a-1@2'], 'the same name replaces');
  ix.add(slice('a-2', 'a'));
  ix.add(slice('a-3', 'a'));
  ix.add(slice('a-2', 'a', '3'));
  assert.deepEqual(names(ix.of('default/a')), ['a-1@2', 'a-2@3', 'a-3@1']);
  assert.equal(ix.remove(slice('a-1', 'a')), 'default/a');
  ix.remove(slice('a-3', 'a'));
  assert.deepEqual(names(ix.of('default/a')), ['a-2@3']);
  ix.add(slice('a-4', 'a'));
  assert.deepEqual(names(ix.of('default/a')), ['a-2@3', 'a-4@1'], 'a collapsed entry grows again');
  ix.remove(slice('a-2', 'a'));
  ix.remove(slice('a-4', 'a'));
  assert.deepEqual(ix.of('default/a'), []);
  assert.equal(ix.size, 0, 'a Service without slices keeps no entry');
});

test('SliceIndex: removing a slice it does not hold changes nothing; Services and namespaces stay apart', () => {
  const ix = new SliceIndex();
  ix.add(slice('a-1', 'a'));
  ix.add(slice('a-1', 'a', '1', 'other'));
  ix.add(slice('b-1', 'b'));
  assert.equal(ix.remove(slice('a-9', 'a')), 'default/a');
  assert.equal(ix.remove(slice('b-1', 'a')), 'default/a', 'a slice of another Service under this one');
  assert.deepEqual(names(ix.of('default/a')), ['a-1@1']);
  assert.deepEqual(names(ix.of('other/a')), ['a-1@1']);
  assert.deepEqual(names(ix.of('default/b')), ['b-1@1']);
  assert.equal(ix.size, 3);
  ix.clear();
  assert.equal(ix.size, 0);
});

test('SliceIndex: a slice without the service-name label belongs to no Service', () => {
  const ix = new SliceIndex();
  assert.equal(sliceService(slice('x', undefined)), undefined);
  assert.equal(sliceService(slice('x', '')), undefined);
  assert.equal(ix.add(slice('x', undefined)), undefined);
  assert.equal(ix.remove(slice('x', undefined)), undefined);
  assert.equal(ix.size, 0);
});
