import type { IncomingMessage } from 'node:http';

/**
 * Whether the caller can no longer receive an answer on this request's connection: it closed
 * or reset the connection (a client whose own timeout fired, say), which Node answers by ending
 * its side, so the socket is no longer writable.
 *
 * A paid call checks this just before it publishes its usage event: an answer nobody can
 * receive is not charged, so a client that gave up and retries pays once, not twice. Once the
 * event is published the call is charged whether or not the answer arrives: that window (the
 * usage batch's commit and the answer's write, milliseconds) no server can close.
 */
export function callerGone(req: IncomingMessage): boolean {
  const socket = req.socket;
  return socket.destroyed || !socket.writable;
}

/** The status written in the access line of a call dropped so (nginx's "client closed request"):
 * nothing is sent, the connection being gone. */
export const CLIENT_CLOSED_REQUEST = 499;
