import type { Knex } from 'knex';

// The Postgres bus's consumers are now woken by the publishing process after its batches land,
// at most every 10 ms (core/usage/consumer-waker.ts), instead of by this statement trigger in
// every batch's transaction: a NOTIFY makes commits queue on one database-wide lock through
// their WAL flush, and wakes every listening backend, on every billed batch.
//
// Something else that writes to usage_bus_batches (a tool, a test) now wakes no one: the
// consumer finds its rows within its poll interval (1 s), or it sends `NOTIFY usage_bus` itself.
// API processes still running the previous version publish as before; their batches are found
// at the consumer's next poll or wake-up.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER usage_bus_batches_notify ON usage_bus_batches');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TRIGGER usage_bus_batches_notify AFTER INSERT ON usage_bus_batches
    FOR EACH STATEMENT EXECUTE FUNCTION notify_usage_bus()`);
}
