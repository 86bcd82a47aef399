// `signet serve --processes N`: N server processes on one host sharing its port through Node's
// cluster module (the primary accepts connections and hands them round-robin to the workers). Every
// process is a complete server: all state that matters lives in the database, so any process can
// answer any request. Use it to use a host's cores; use more hosts for availability.
// The metrics listener is the primary's alone: it asks every worker for its metrics and sums them.
import cluster, { type Worker } from 'node:cluster';
import { answerClusterPrimary, startClusterMetricsServer } from './metrics.ts';

export type ClusterOptions = {
  processes: number;
  /** what each worker process runs (the plain `serve`) */
  serve: () => Promise<void>;
  /** SIGNET_METRICS_ADDR: where the primary serves the sum of every process's metrics */
  metrics: { host: string; port: number } | 'off';
  /** how long SIGTERM waits for the workers to finish their requests before they are killed */
  shutdownDeadlineMs?: number;
  log: (line: string) => void;
};

/** In the primary: serves the metrics listener, forks, replaces a process that dies unexpectedly, and passes SIGTERM on. In a worker: serves. */
export async function runCluster(options: ClusterOptions): Promise<void> {
  if (!cluster.isPrimary) {
    // Answer the primary from the start, so a scrape while this process starts up is not left waiting.
    if (options.metrics !== 'off') answerClusterPrimary();
    return options.serve();
  }
  // Before forking: a metrics address already in use stops `serve` with no process started.
  if (options.metrics !== 'off') await startClusterMetricsServer(options.metrics.host, options.metrics.port);
  let stopping = false;
  const restarts: number[] = [];
  const fork = () => cluster.fork();
  for (let i = 0; i < options.processes; i++) fork();
  cluster.on('exit', (worker: Worker, code, signal) => {
    if (stopping) return;
    // A crash loop would fork forever: give up after 10 unexpected exits within a minute.
    const now = Date.now();
    restarts.push(now);
    while (restarts.length > 0 && restarts[0]! < now - 60_000) restarts.shift();
    if (restarts.length > 10) {
      options.log(`signet: server processes keep exiting (last: ${signal ?? `code ${code}`}); stopping`);
      process.exit(1);
    }
    options.log(`signet: server process ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`);
    fork();
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
      for (const worker of workers) worker.process.kill('SIGTERM');
      const deadline = setTimeout(() => {
        for (const worker of workers) worker.process.kill('SIGKILL');
        process.exit(1);
      }, options.shutdownDeadlineMs ?? 30_000);
      deadline.unref();
      let left = workers.length;
      if (left === 0) process.exit(0);
      cluster.on('exit', () => {
        left -= 1;
        if (left === 0) process.exit(0);
      });
    });
  }
}
