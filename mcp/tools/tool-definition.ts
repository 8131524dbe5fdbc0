import type { z } from 'zod';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ToolName } from '../../core/billing/products.js';
import type { CompanyStore } from '../../core/companies/index.js';
import type { CompanyQueryDeps } from '../../core/companies/search-companies.js';

/** What a tool's run() may use: the company store and the query dependencies of this call. */
export interface ToolContext {
  requestId: string;
  store: CompanyStore;
  companies: CompanyQueryDeps;
  /**
   * Whether the caller's organization may call `tool` (its plan includes it): a message that
   * sends the agent to another tool names it only then. True when the plan cannot be read now
   * (that tool's own answer then says so), so a hint never states a plan lacks what it has.
   */
  mayCall(tool: ToolName): Promise<boolean>;
}

/**
 * One tool: its name (a product of the catalogue, so it is billable), what the model reads
 * (title, description, schemas, annotations) and what it does. The input schema validates the
 * arguments before run() sees them; the output schema types what run() returns (tests check
 * real results against it; it is not parsed per call, which cost ~5% of a profile call). The usage measure is added to the description per organization.
 */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  annotations: ToolAnnotations;
  /**
   * For an argument the tool does not take, what to do instead, when the name says what the
   * model looked for (a revenue filter the search does not have): the refusal's list of the
   * arguments it takes does not say that nothing in it does the same.
   */
  unknownArgumentHint?(name: string): string | undefined;
  run(args: z.output<I>, ctx: ToolContext): Promise<z.input<O>>;
}

/** Identity at run time; lets TypeScript infer run()'s argument and result types from the schemas. */
export function defineTool<I extends z.ZodObject, O extends z.ZodType>(definition: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return definition;
}
