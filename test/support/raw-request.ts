import http from 'node:http';

/**
 * A request with headers exactly as listed, repeats included (`fetch` joins a repeated header
 * into one). `headers` is flat, as IncomingMessage.rawHeaders: [name, value, name, value, ...].
 */
export function rawRequest(url: string, options: { method?: string; headers: string[]; body?: string }): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    // Given as a list, headers are sent as they are: Host too must be named.
    const headers = ['Host', new URL(url).host, ...options.headers];
    const req = http.request(url, { method: options.method ?? 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
