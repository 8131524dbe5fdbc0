import type { Knex } from 'knex';

// A company's holders, officers, branches and years must belong to a stored company. That was
// four foreign keys, whose checks run once per inserted row (a query and a row lock each):
// about a fifth of an import's database time, for the ~13 child rows of every company. The
// same rule is now checked once per statement, over all the rows it inserted or updated, by
// triggers with transition tables; deleting companies deletes their children the same way
// (the keys' ON DELETE CASCADE).
//
// What the keys also did and these triggers do not: lock the company while a child row naming
// it is written. A company deleted by one transaction while another adds children to it could
// leave those children behind. Nothing deletes companies (imports upsert them, one writer per
// fiscal code at a time), and ids are never updated.
const CHILD_TABLES = ['company_holders', 'company_officers', 'company_branches', 'company_years'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION company_children_belong() RETURNS trigger AS $$
    DECLARE orphan bigint;
    BEGIN
      SELECT n.company_id INTO orphan FROM new_rows n
      WHERE NOT EXISTS (SELECT 1 FROM companies c WHERE c.id = n.company_id) LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'insert or update on table "%" violates the company rule', TG_TABLE_NAME
          USING ERRCODE = 'foreign_key_violation', DETAIL = format('Key (company_id)=(%s) is not present in table "companies".', orphan);
      END IF;
      RETURN NULL;
    END $$ LANGUAGE plpgsql;

    CREATE FUNCTION companies_delete_children() RETURNS trigger AS $$
    BEGIN
      ${CHILD_TABLES.map((t) => `DELETE FROM ${t} WHERE company_id IN (SELECT id FROM old_rows);`).join('\n      ')}
      RETURN NULL;
    END $$ LANGUAGE plpgsql;
  `);
  for (const table of CHILD_TABLES) {
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_company_id_foreign`);
    // One trigger per event: Postgres allows transition tables only on single-event triggers.
    for (const event of ['INSERT', 'UPDATE']) {
      await knex.raw(`CREATE TRIGGER ${table}_belongs_${event.toLowerCase()} AFTER ${event} ON ${table}
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION company_children_belong()`);
    }
  }
  await knex.raw(`CREATE TRIGGER companies_delete_children AFTER DELETE ON companies
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION companies_delete_children()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER companies_delete_children ON companies');
  for (const table of CHILD_TABLES) {
    for (const event of ['insert', 'update']) await knex.raw(`DROP TRIGGER ${table}_belongs_${event} ON ${table}`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_company_id_foreign FOREIGN KEY (company_id) REFERENCES companies (id) ON DELETE CASCADE`);
  }
  await knex.raw('DROP FUNCTION companies_delete_children()');
  await knex.raw('DROP FUNCTION company_children_belong()');
}
