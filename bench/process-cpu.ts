import { readFile } from 'node:fs/promises';

/**
 * A process's name and CPU time so far (user + system, ms) from /proc; null when it is gone or
 * /proc is not there. The benches split where a run's CPU went with it.
 */
export async function processCpu(pid: number): Promise<{ comm: string; ms: number } | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  // The name is in parentheses and may itself contain spaces or parentheses.
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return { comm: stat.slice(stat.indexOf('(') + 1, close), ms: (Number(fields[11]) + Number(fields[12])) * 10 }; // USER_HZ = 100
}
