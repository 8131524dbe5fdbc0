import type pg from 'pg';

/**
 * Closes a pg client's socket at once. end() says goodbye and waits for the server's: on a socket
 * that stopped answering that never comes, and the socket would linger for the kernel's 15
 * minutes. pg has no public way to drop it, hence its connection's stream.
 */
export function dropSocket(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}
