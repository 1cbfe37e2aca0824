// A loopback HTTP server speaking just enough of airlock's /v1/decide
// contract to misbehave on purpose: the tests use it ONLY for the daemon
// failures a real daemon does not produce on demand (garbage bodies, a
// stall past the deadline, error statuses). Everything else runs against a
// real `airlock serve`.
import { createServer } from 'node:http';

/**
 * @param {(req: import('node:http').IncomingMessage, body: any, res: import('node:http').ServerResponse) => void} handler
 */
export async function startContractServer(handler) {
  const requests = [];
  const sockets = new Set();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', d => (raw += d));
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, body, res);
    });
  });
  server.on('connection', s => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise(r => server.listen(0, '127.0.0.1', r));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise(r => {
        for (const s of sockets) s.destroy();
        server.close(() => r(undefined));
      }),
  };
}
