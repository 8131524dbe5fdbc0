import { readFileSync } from 'node:fs';
import Koa from 'koa';

// The baseline: a bare Koa app answering a small JSON body, in its own process like the API,
// so both are measured the same way by the same load generator.
//
// With a second argument, a JSON file `{ headers, body }`, it answers every request with those
// headers and that body instead: the bytes of a real API answer, so a pass can show what the
// load generator's reading of a bigger answer costs, apart from the API's own work.
const answer = process.argv[3] ? (JSON.parse(readFileSync(process.argv[3], 'utf8')) as { headers: Record<string, string>; body: string }) : undefined;
const app = new Koa();
app.use(
  answer
    ? (ctx) => {
        ctx.set(answer.headers);
        ctx.body = answer.body;
      }
    : (ctx) => {
        ctx.body = { hello: 'world' };
      },
);
const server = app.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
