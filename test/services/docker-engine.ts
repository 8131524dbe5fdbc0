import { existsSync } from 'node:fs';
import { getContainerRuntimeClient } from 'testcontainers';

/**
 * Whether a container engine answers, decided quickly: with no socket and no DOCKER_HOST there
 * is nothing to ask, and an engine that does not answer within the timeout counts as absent
 * (testcontainers' own discovery can take much longer to give up).
 */
export async function dockerEngineAnswers(dockerHost: string | undefined, timeoutMs = 5_000): Promise<boolean> {
  if (!dockerHost && !existsSync('/var/run/docker.sock')) return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); });
  try {
    return await Promise.race([getContainerRuntimeClient().then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
