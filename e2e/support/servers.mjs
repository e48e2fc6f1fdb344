// The small HTTP servers web tests start for themselves, on 127.0.0.1 only.
import http from 'node:http';

/// Starts a server on 127.0.0.1:port; resolves to it once listening.
export function listen(port, handler) {
  const server = http.createServer(handler);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/// Stops a server started by `listen`.
export function close(server) {
  return new Promise((resolve) => server.close(resolve));
}

/// One request as a local program could make it, with any headers it
/// likes (a browser would never send most of these): resolves to the
/// status, the headers and the body read as JSON when it is JSON.
export function rawRequest(port, { method = 'GET', path = '/', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    // A connection of its own: a refused request's unread body must not be
    // read as the start of the next request on a kept-alive connection.
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, json, text });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
