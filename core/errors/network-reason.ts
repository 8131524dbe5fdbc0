// Why a socket failed before the server at the other end said a word (Postgres, a Kafka broker),
// worded for the person who reads a start-up's one line: "cannot reach … (connection refused)".
const reasons: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** The socket error `code` in words, `peer` naming the other end ("server", "broker"); undefined for another code. */
export function networkReason(code: unknown, peer: string): string | undefined {
  if (code === 'ECONNRESET') return `the ${peer} closed the connection`;
  return typeof code === 'string' ? reasons[code] : undefined;
}
