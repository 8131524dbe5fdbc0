import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { isPublicAddress } from '../net/public-address.js';

// Webhook addresses are typed by customers' admins, and the service sends to them from inside
// our network: an address that reaches a private, loopback or link-local host (a cloud metadata
// endpoint, an internal service) would let an admin make us send requests there. So unless the
// deployment allows private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS: on by default outside
// production, where the receiver is often on the developer's own machine), every address the
// host name resolves to must be public. The check runs in the connection's own DNS lookup, so
// the address checked is the address connected to (a name that resolves to a public address
// when saved and a private one when sent is refused too).

/**
 * Whether an address can be seen to be private without looking its name up: an IP address
 * outside the public ranges, or `localhost`. A name is judged when sending, where it is resolved.
 */
export function isPrivateAtSight(url: string): boolean {
  // A trailing dot is the same name, fully qualified (localhost. is localhost).
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return net.isIP(host) !== 0 && !isPublicAddress(host);
}

export class PrivateTargetError extends Error {
  constructor(host: string, address: string) {
    super(`refused: ${host} is ${address}, a private address (see WEBHOOK_ALLOW_PRIVATE_TARGETS)`);
    this.name = 'PrivateTargetError';
  }
}

/** dns.lookup, refusing a name that resolves to any private address. */
const publicOnlyLookup: net.LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const refused = list.find((a) => !isPublicAddress(a.address));
    if (refused) return callback(new PrivateTargetError(hostname, refused.address), '', 0);
    if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};

export interface WebhookPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivateTargets: boolean;
}

/** POSTs a webhook; resolves with the status code (redirects are not followed: a 3xx is an answer). */
export function postWebhook(post: WebhookPost): Promise<number> {
  const url = new URL(post.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // An address written as such is not looked up: it is judged here.
  if (!post.allowPrivateTargets && net.isIP(host) !== 0 && !isPublicAddress(host)) return Promise.reject(new PrivateTargetError(host, host));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: 'POST',
      headers: { ...post.headers, 'content-length': String(Buffer.byteLength(post.body)) },
      ...(post.allowPrivateTargets ? {} : { lookup: publicOnlyLookup }),
    }, (res) => {
      clearTimeout(deadline);
      res.resume(); // the answer's body is not read, only its status
      resolve(res.statusCode ?? 0);
    });
    // The whole exchange, connection included, within the deadline.
    const deadline = setTimeout(() => req.destroy(new WebhookTimeoutError(post.timeoutMs)), post.timeoutMs);
    req.on('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    req.end(post.body);
  });
}

export class WebhookTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'WebhookTimeoutError';
  }
}
