// The load generator: autocannon (as a library) in its own process, driven by the harness over IPC.
// ← {type:'run', id, job} → {type:'result', id, result}. One job is one round against one target.
//
// A job names request kinds and a pattern that says which kind each request of a connection is:
//   kinds: { [name]: { method, path, headers, header?, headerPrefix?, bodyPrefix?, bodySuffix?, shared?, lists } }
//   - shared: true — `lists[0]` is one list every connection reads cyclically (userinfo tokens: reusable);
//   - otherwise `lists[c]` belongs to connection c alone and each value is sent exactly once (refresh
//     tokens and codes are single use: sharing a list, or wrapping around it, would be a replay).
// When a connection's own list runs out the measurement window closes there (what came back before
// counts; the run is shorter) and `exhausted` says so.
//
// Everything reported is counted here from autocannon's events, within the window: 2xx responses,
// non-2xx, socket errors and timeouts (all errors), latency of 2xx responses, and this process's CPU.
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

/** Latency histogram: 10 µs buckets below 50 ms, 1 ms buckets up to 10 s. */
const FINE_LIMIT_US = 50_000;
function bucketOf(ms) {
  const us = ms * 1000;
  if (us < FINE_LIMIT_US) return Math.floor(us / 10);
  return FINE_LIMIT_US / 10 + Math.min(Math.floor((us - FINE_LIMIT_US) / 1000), 10_000);
}

function runJob(job) {
  return new Promise((resolve, reject) => {
    const { origin, connections, durationMs, kinds, pattern } = job;
    const url = new URL(origin);
    const histogram = new Map();
    const statusCounts = {};
    const errorSamples = [];
    const perKind = {};
    for (const name of Object.keys(kinds)) perKind[name] = { ok: 0, non2xx: 0 };
    let ok = 0;
    let non2xx = 0;
    let socketErrors = 0;
    let nextConnection = 0;
    let exhausted = false;
    let windowOpen = true;
    let windowEnd = 0;

    const cpuBefore = process.cpuUsage();
    const eluBefore = performance.eventLoopUtilization();
    const started = performance.now();
    let instance;
    const closeWindow = () => {
      if (!windowOpen) return;
      windowOpen = false;
      windowEnd = performance.now();
      // Clients are built inside autocannon(): a list that is empty from the start closes the window
      // before the instance exists.
      if (instance) instance.stop();
      else setImmediate(() => instance.stop());
    };

    /** Builds one connection's request: its own cursor into each kind, its own offset into the pattern. */
    function connectionRequest(c) {
      const cursors = Object.fromEntries(Object.keys(kinds).map((name) => [name, kinds[name].shared ? (c * 997) % kinds[name].lists[0].length : 0]));
      let n = (c * 37) % pattern.length;
      const state = { kind: pattern[0] };
      const request = {
        method: 'GET',
        path: '/',
        setupRequest(req) {
          const name = pattern[n++ % pattern.length];
          const kind = kinds[name];
          state.kind = name;
          let value;
          if (kind.shared) {
            const list = kind.lists[0];
            value = list[cursors[name]++ % list.length];
          } else {
            const list = kind.lists[c];
            value = list?.[cursors[name]++];
            if (value === undefined) {
              // Out of single-use values: never wrap. Close the window; what follows is not counted.
              if (windowOpen) exhausted = true;
              closeWindow();
              value = 'exhausted';
            }
          }
          req.method = kind.method;
          req.path = kind.path;
          req.headers = { ...kind.headers };
          if (kind.header) req.headers[kind.header] = (kind.headerPrefix ?? '') + value;
          if (kind.bodyPrefix !== undefined) req.body = kind.bodyPrefix + encodeURIComponent(value) + (kind.bodySuffix ?? '');
          else delete req.body;
          return req;
        },
        onResponse(status, body) {
          if (!windowOpen) return;
          if (status < 200 || status >= 300) {
            perKind[state.kind].non2xx++;
            if (errorSamples.length < 5) errorSamples.push({ kind: state.kind, status, body: String(body).slice(0, 300) });
          } else perKind[state.kind].ok++;
        },
      };
      return request;
    }

    instance = autocannon(
      {
        url: url.origin,
        connections,
        pipelining: 1,
        // Stopped by our own timer; autocannon notices within one sample interval.
        duration: durationMs / 1000 + 30,
        sampleInt: 50,
        timeout: 10,
        requests: [{ method: 'GET', path: '/' }],
        setupClient(client) {
          client.setRequests([connectionRequest(nextConnection++)]);
        },
      },
      (error) => {
        if (error) return reject(error);
        const end = windowEnd || performance.now();
        const cpu = process.cpuUsage(cpuBefore);
        const elu = performance.eventLoopUtilization(eluBefore);
        resolve({
          ok,
          non2xx,
          socketErrors,
          errors: non2xx + socketErrors,
          seconds: (end - started) / 1000,
          rps: ok / ((end - started) / 1000),
          exhausted,
          histogram: Object.fromEntries(histogram),
          statusCounts,
          perKind,
          errorSamples,
          loadgenCpu: (cpu.user + cpu.system) / 1000 / (performance.now() - started),
          loadgenElu: elu.utilization,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (!windowOpen) return;
      statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        const b = bucketOf(responseTime);
        histogram.set(b, (histogram.get(b) ?? 0) + 1);
      } else non2xx++;
    });
    instance.on('reqError', (error) => {
      if (!windowOpen) return;
      socketErrors++;
      if (errorSamples.length < 5) errorSamples.push({ kind: 'socket', status: 0, body: String(error?.message ?? error) });
    });
    setTimeout(closeWindow, durationMs);
  });
}

process.on('message', async (message) => {
  if (message.type !== 'run') return;
  try {
    process.send({ type: 'result', id: message.id, result: await runJob(message.job) });
  } catch (error) {
    process.send({ type: 'result', id: message.id, error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready' });
