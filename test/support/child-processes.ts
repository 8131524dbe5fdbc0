import type { ChildProcess } from 'node:child_process';

/** Kills (SIGKILL) each child still running, and empties `children` once all have ended: a test's leftovers. */
export async function killChildren(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
