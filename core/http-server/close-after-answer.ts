import type { ServerResponse } from 'node:http';

/**
 * For a request whose body is refused part-read (too large): its answer says `Connection: close`
 * and the connection ends after it. Kept alive, the unread rest of the body would sit in front of
 * the client's next request on that connection, which would then get no answer until the
 * keep-alive timeout (65 s) reset it: a browser tab that froze for a minute after a 413 page.
 */
export function closeAfterAnswer(res: ServerResponse): void {
  // Node writes `Connection: close` and ends the socket once the answer is sent.
  res.shouldKeepAlive = false;
}
