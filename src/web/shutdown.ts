// Graceful shutdown of `signet serve` on SIGTERM, for a process behind a load balancer: stop accepting,
// finish what was accepted, and never cut a kept-alive connection while a request may be on its way.
//
// http.Server.close() is not enough by itself: besides closing the listener it closes every idle
// kept-alive connection at once, and a balancer that has just written a request on one of them gets a
// reset. For a POST (a token request) it cannot know whether the server acted on it, so nginx answers
// 502 rather than send it elsewhere. So the listener is closed first, alone; every answer from then on
// (and every one in progress) says `Connection: close`, so a connection in use ends cleanly after its
// next answer; only what stayed idle for a while is closed under the balancer.
// Then the app closes as usual (server-sent-event streams end with a retry hint, in-flight requests
// finish, the database goes last), and a hard deadline ends the process whatever is left.
import net from 'node:net';
import type http from 'node:http';

/** After SIGTERM the process exits within this, whatever still runs (SIGNET_SHUTDOWN_SECONDS' default; the cluster primary waits 5 s longer). */
export const SHUTDOWN_DEADLINE_MS = 25_000;

/**
 * How long kept-alive connections stay open after the listener closed. A balancer sending steady
 * traffic uses each of its connections within milliseconds; each then gets one more answer, with
 * `Connection: close`, and the balancer opens its next connection elsewhere. What is still idle after
 * this is a connection the balancer is not using, and only that is closed under it.
 */
export const KEEP_ALIVE_LINGER_MS = 1_000;

function connectionCount(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}

export type ConnectionTracker = {
  /**
   * Stops accepting connections and lets the kept-alive ones end by themselves, for at most
   * `lingerMs` (less when every connection has gone); then closes those still idle. Requests in
   * flight, and streams, are left to the app's own close.
   */
  drain(lingerMs?: number): Promise<void>;
};

/**
 * Keeps track of the answers in progress (call it when the server starts listening), so that a drain
 * can make each of them the last on its connection — the request that was already being handled when
 * SIGTERM came included. Tracked by connection, not by request (issue 44: a listener on every answer was
 * ~3 % of a userinfo request's CPU): a kept-alive connection carries many answers, and the one it is
 * answering now is Node's `socket._httpMessage` (null between answers).
 */
export function trackConnections(server: http.Server): ConnectionTracker {
  const connections = new Set<net.Socket>();
  let draining = false;
  const lastOnItsConnection = (response: http.ServerResponse) => {
    if (!response.headersSent) {
      response.setHeader('connection', 'close');
      return;
    }
    // Already told the client it may keep the connection (a long download): end it after this answer.
    const socket = response.socket;
    response.once('finish', () => socket?.end());
  };
  server.on('connection', (socket: net.Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  // Before the app's own handler, so the header is there whatever route answers.
  server.prependListener('request', (_request, response) => {
    if (draining) lastOnItsConnection(response);
  });
  return {
    async drain(lingerMs = KEEP_ALIVE_LINGER_MS) {
      draining = true;
      for (const socket of connections) {
        const response = (socket as net.Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage;
        if (response && !response.writableFinished) lastOnItsConnection(response);
      }
      // net's close, not http's: the listener goes (new connections are refused, and the balancer
      // tries the next server), the kept-alive connections stay.
      net.Server.prototype.close.call(server);
      const until = Date.now() + lingerMs;
      while (Date.now() < until && (await connectionCount(server)) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      server.closeIdleConnections();
    },
  };
}

/**
 * The SIGTERM sequence: drain, then `close` (the app with its streams and in-flight requests, the
 * other listeners, the database). Exits 0 when all of it finished, 1 on an error or at the deadline.
 */
export function shutDownOnSignal(connections: ConnectionTracker, close: () => Promise<void>, log: (line: string) => void, deadlineMs = SHUTDOWN_DEADLINE_MS): void {
  log(`signet: stopping (pid ${process.pid}): no new connections; finishing what was accepted, at most ${Math.round(deadlineMs / 1000)} s`);
  const deadline = setTimeout(() => {
    log(`signet: still stopping after ${Math.round(deadlineMs / 1000)} s; exiting anyway`);
    process.exit(1);
  }, deadlineMs);
  deadline.unref();
  connections
    .drain()
    .then(close)
    .then(
      () => {
        log(`signet: stopped (pid ${process.pid})`);
        process.exit(0);
      },
      (error: unknown) => {
        log(`signet: stopping failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
}
