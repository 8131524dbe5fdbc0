/**
 * Runs `work` while telling the group coordinator every `everyMs` that this member is alive.
 * kafkajs heartbeats only between batches (or when eachBatch calls `heartbeat()`), so a batch
 * waiting on a database that stopped answering would otherwise outlast the session timeout: the
 * coordinator drops the member, hands its partitions to another, and the offset commit after
 * the batch is refused (UNKNOWN_MEMBER_ID). A heartbeat that fails (the broker restarting, the
 * group rebalancing) is tried again at the next tick; the rebalance itself is joined once the
 * batch is over, by kafkajs.
 */
export async function heartbeatWhile<T>(heartbeat: () => Promise<void>, everyMs: number, work: () => Promise<T>): Promise<T> {
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    timer = setTimeout(() => {
      // One at a time: a heartbeat to a broker that does not answer waits for its request timeout.
      heartbeat().then(
        () => !done && tick(),
        () => !done && tick(),
      );
    }, everyMs);
  };
  tick();
  try {
    return await work();
  } finally {
    done = true;
    clearTimeout(timer);
  }
}
