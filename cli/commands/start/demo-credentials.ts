import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { createApiKey, hashApiKey } from '../../../core/auth/index.js';
import { createOrganization, ensureDefaultPlans } from '../../../core/billing/index.js';
import type { Db } from '../../../core/db/index.js';

// .data/demo.json: what a newcomer needs after `npm start`. The demo key is stored only as a
// hash in Postgres, so this file is the one place its plain text survives a restart; it lives
// under the git-ignored data folder, next to the embedded database it unlocks.
export const demoFileSchema = z.object({
  apiKey: z.string(),
  organizationId: z.string(),
  baseUrl: z.string(),
  /** The tool server's base, the spec's {mcp_url}; it answers at mcpEndpoint. */
  mcpUrl: z.string(),
  /** Where an MCP client connects: mcpUrl + /mcp (absent from files written before it). */
  mcpEndpoint: z.string().optional(),
  dashboardUrl: z.string().optional(),
  operator: z.object({ email: z.string(), password: z.string().nullable() }).optional(),
  sampleFiscalCodes: z.array(z.string()),
});
export type DemoFile = z.infer<typeof demoFileSchema>;

export const demoFilePath = (dataDir: string) => path.join(dataDir, 'demo.json');

export async function readDemoFile(dataDir: string): Promise<DemoFile | undefined> {
  try {
    return demoFileSchema.parse(JSON.parse(await readFile(demoFilePath(dataDir), 'utf8')));
  } catch {
    return undefined;
  }
}

export async function writeDemoFile(dataDir: string, demo: DemoFile): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  await writeFile(demoFilePath(dataDir), JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 });
}

const DEMO_ORGANIZATION = 'Demo organization';
const DEMO_KEY = 'Demo key';
const START_ACTOR = 'npm-start';

/**
 * Reuses the demo organization and key of an earlier start when the key still works (same
 * key across restarts). Otherwise the demo organization an earlier start made gets a new key:
 * the one in demo.json (its key revoked or expired), or, with no usable demo.json (a start that
 * failed before writing it, or the file removed), the first one `npm start` made. Only when
 * there is none is an organization provisioned on the standard plan, so a start that failed
 * part way never leaves a second "Demo organization" behind it.
 */
export async function ensureDemoOrganization(db: Db, previous: DemoFile | undefined): Promise<{ organizationId: string; apiKey: string; created: 'nothing' | 'key' | 'organization' }> {
  await ensureDefaultPlans(db);
  if (previous) {
    const key = await db('api_keys')
      .where({ hash: hashApiKey(previous.apiKey), organization_id: previous.organizationId })
      .whereNull('revoked_at')
      .first('id', 'expires_at');
    if (key && (!key.expires_at || new Date(key.expires_at).getTime() > Date.now())) {
      return { organizationId: previous.organizationId, apiKey: previous.apiKey, created: 'nothing' };
    }
  }
  const earlier = await earlierDemoOrganization(db, previous);
  if (earlier) {
    const { key } = await createApiKey(db, { organizationId: earlier, name: DEMO_KEY, createdBy: START_ACTOR });
    return { organizationId: earlier, apiKey: key, created: 'key' };
  }
  const organization = await createOrganization(db, { name: DEMO_ORGANIZATION, planId: 'standard', actor: START_ACTOR });
  const { key } = await createApiKey(db, { organizationId: organization.id, name: DEMO_KEY, createdBy: START_ACTOR });
  return { organizationId: organization.id, apiKey: key, created: 'organization' };
}

async function earlierDemoOrganization(db: Db, previous: DemoFile | undefined): Promise<string | undefined> {
  if (previous) {
    const named = await db('organizations').where({ id: previous.organizationId }).first<{ id: string } | undefined>('id');
    if (named) return named.id;
  }
  const made = await db('api_keys as k')
    .join('organizations as o', 'o.id', 'k.organization_id')
    .where({ 'k.name': DEMO_KEY, 'k.created_by': START_ACTOR, 'o.name': DEMO_ORGANIZATION })
    .orderBy('k.created_at')
    .first<{ id: string } | undefined>('o.id');
  return made?.id;
}
