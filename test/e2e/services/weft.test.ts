// The Service suite against weftd --service-proxy.
import { serviceSuite } from './suite.ts';

serviceSuite({
  name: 'weftd --service-proxy',
  weftdArgs: ['--service-proxy'],
  start: () => Promise.resolve(),
  restart: async (c, n) => {
    await c.stopWeftd(n);
    await c.startWeftd(n);
  },
});
