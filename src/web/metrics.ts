// Prometheus metrics on their own listener (SIGNET_METRICS_ADDR), never on the public port.
// With `serve --processes N` the listener is the primary's, and reports the sum of every process.
import type { Server } from 'node:http';
import type { Counter, Histogram, Registry } from 'prom-client';
import fp from 'fastify-plugin';
import { promClient } from '../audit/audit-metrics.ts';

// Node's http module taken as an ES module namespace loads its lazy exports with it — the fetch stack
// (undici) and with it TLS and HTTP/2, ~12 MB resident in every server; the CommonJS object does not.
const http = process.getBuiltinModule('node:http');


export type Metrics = { registry: Registry; requests: Counter<'method' | 'route' | 'status'>; duration: Histogram<'method' | 'route'> };

export function createMetrics(): Metrics {
  const { Registry, Counter, Histogram, collectDefaultMetrics } = promClient();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'signet_' });
  const requests = new Counter({
    name: 'signet_http_requests_total',
    help: 'HTTP requests answered, by route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'signet_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return { registry, requests, duration };
}

/** Counts every answered request by its route pattern (never the raw URL, which would carry values). */
export const requestMetrics = fp<{ metrics: Metrics }>(
  async (app, { metrics }) => {
    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      metrics.requests.inc({ method: request.method, route, status: String(reply.statusCode) });
      metrics.duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    });
  },
  { name: 'signet-metrics' },
);

/** What the listener serves: one process's registry, or the cluster primary's sum of its processes. */
export type MetricsSource = { readonly contentType: string; metrics(): Promise<string> };

export function startMetricsServer(source: MetricsSource, host: string, port: number): Promise<Server> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    source.metrics().then(
      (text) => res.writeHead(200, { 'content-type': source.contentType }).end(text),
      (error: unknown) =>
        res
          .writeHead(503, { 'content-type': 'text/plain' })
          .end(`Metrics unavailable (${error instanceof Error ? error.message : String(error)}); a server process may be starting or stopping: scrape again\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/**
 * In the `serve --processes` primary: the metrics listener, answering each scrape with every
 * worker's metrics as prom-client's cluster support aggregates them (counters and histograms
 * summed, process metrics as prom-client defines per metric). Without it each worker would open a
 * listener on the same port and a scrape would see one random process's counters.
 */
export function startClusterMetricsServer(host: string, port: number): Promise<Server> {
  const aggregator = new (promClient().AggregatorRegistry)();
  return startMetricsServer({ contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() }, host, port);
}

/**
 * In a `serve --processes` worker: answer the primary's requests for this process's metrics, from
 * `registry` (before the server has made its registry: an empty one, as nothing was served yet).
 */
export function answerClusterPrimary(registry: Registry = new (promClient().Registry)()): void {
  const { AggregatorRegistry } = promClient();
  AggregatorRegistry.setRegistries(registry);
  // prom-client installs the worker's answering listener only in this constructor (once per process).
  new AggregatorRegistry();
}
