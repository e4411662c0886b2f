// Fastify hello world, the HTTP ceiling the service is compared with: one route returning a
// small JSON, no logger. Started as its own process by bench/run.ts: `node bench/suite/hello-server.ts PORT`.
import Fastify from 'fastify';

const port = Number(process.argv[2] ?? 0);
const app = Fastify({ logger: false });
app.get('/', async () => ({ ok: true, message: 'hello world', service: 'bench' }));
await app.listen({ port, host: '127.0.0.1' });
const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
