// The ceiling: a bare node:http server that answers every request with a userinfo-sized JSON body
// (the same bytes Signet's userinfo sends for the bench account). Any request body is read first, as
// a real endpoint would. Run by the harness through fork(); it reports its port over IPC.
import http from 'node:http';

const BODY = Buffer.from(
  JSON.stringify({
    sub: '0f8fad5b-d9cb-469f-a165-70867728950e',
    name: 'Ada Lovelace',
    picture: '',
    email: 'ada@example.com',
    email_verified: true,
  }),
);
const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'content-length': BODY.length, 'cache-control': 'no-store' };

const server = http.createServer((request, response) => {
  request.on('data', () => {});
  request.on('end', () => response.writeHead(200, HEADERS).end(BODY));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ type: 'ready', port: server.address().port }));
process.on('disconnect', () => process.exit(0));
