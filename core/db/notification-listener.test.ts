import { afterEach, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../logging/index.js';
import { hostAndPort, startTcpProxy, type TcpProxy } from '../../test/support/tcp-proxy.js';
import { createNotificationListener, type NotificationListener } from './notification-listener.js';

// The LISTEN connection behind a TCP relay that stops forwarding without closing anything: a
// half-open socket, as when the database's host freezes. No error ever comes on its own; the
// heartbeat's deadline is what notices.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listenerBehindProxy(): Promise<{ proxy: TcpProxy; listener: NotificationListener; changes: boolean[]; lines: string[] }> {
  const databaseUrl = inject('databaseUrl');
  const proxy = await startTcpProxy(hostAndPort(databaseUrl));
  cleanups.push(() => proxy.close());
  const lines: string[] = [];
  const listener = createNotificationListener({
    connectionString: proxy.urlFor(databaseUrl),
    logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }),
    heartbeatMs: 200,
    heartbeatTimeoutMs: 500,
    connectTimeoutMs: 1_000,
  });
  cleanups.push(() => listener.close());
  const changes: boolean[] = [];
  listener.onConnectionChange((connected) => changes.push(connected));
  listener.subscribe('test_listener_heartbeat', () => {});
  await listener.whenConnected();
  return { proxy, listener, changes, lines };
}

async function waitFor(what: string, probe: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('when the LISTEN connection stops answering without closing', () => {
  it('then the heartbeat deadline counts it lost within a second or two, says so once, and the listener keeps trying to reconnect', async () => {
    const { proxy, listener, changes, lines } = await listenerBehindProxy();
    expect(listener.connected).toBe(true);
    proxy.freeze();
    await waitFor('the listener to count the connection lost', () => !listener.connected, 5_000);
    expect(changes).toEqual([true, false]);
    const entries = () => lines.map((l) => JSON.parse(l) as { level: string; msg: string; err?: { message?: string } });
    const disconnected = entries().filter((e) => e.msg === 'notification listener disconnected; reconnecting');
    expect(disconnected).toHaveLength(1);
    expect(disconnected[0]!.err?.message).toMatch(/no answer to the heartbeat within 500 ms/);
    // Reconnects go to the frozen relay, which accepts and never answers: each gives up at its
    // connect deadline (1 s here) and the next is tried, instead of one hanging for ever.
    await waitFor('two reconnects to give up', () => entries().filter((e) => e.msg === 'notification listener could not connect').length >= 2, 8_000);
    expect(entries().filter((e) => e.msg === 'notification listener could not connect').every((e) => /timeout/i.test(e.err?.message ?? ''))).toBe(true);
    expect(listener.connected).toBe(false);
    expect(changes).toEqual([true, false]);
  });
});

describe('when the process closes the listener while its connection stops answering', () => {
  it('then close() does not wait for a goodbye that never comes: it drops the socket past the heartbeat deadline', async () => {
    const { proxy, listener } = await listenerBehindProxy();
    proxy.freeze();
    const began = Date.now();
    await Promise.race([listener.close(), new Promise((_, reject) => setTimeout(() => reject(new Error('close() still waiting after 5 s')), 5_000))]);
    expect(Date.now() - began).toBeLessThan(5_000);
  });
});
