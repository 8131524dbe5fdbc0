// A tool's output schema as tools/list shows it, made small. Agent hosts put every tool
// definition into the model's context, so each byte of tools/list is paid in tokens by every
// agent in every session. zod writes a schema out in full wherever it is used: the profile's
// identity and latest year twice (its large and its other branch), the same ratio, company or
// enum at every place that holds one, each with its descriptions; that made tools/list ~62 KB
// (~15k tokens), the profile's output schema alone 20 KB. Here, with what each value may be left
// unchanged for the client that validates structuredContent against it (the SDK's ajv):
//  - a subtree written out more than once goes once into `definitions` and is `$ref`ed (draft-07,
//    the dialect the schemas declare; ajv resolves the refs), named for the properties that
//    hold it, so the model still reads what it is (`#/definitions/identity`,
//    `#/definitions/profitability_liquidity_solvency`);
//  - `anyOf: [X, {type: null}]` becomes `type: [X's type, "null"]` (X's other keywords only
//    constrain values of X's type, so null passes as before; an enum gets null added);
//  - zod's bounds of z.int(), ±(2^53-1), are dropped (no client holds an integer beyond them
//    exactly anyway), and so is the pattern zod writes beside `format: "date"`, which says the same;
//  - `additionalProperties: false` is dropped: the model learns nothing from it about what it
//    receives, and the server writes each result from the same zod schema (tests check them).
// Input schemas are not passed here: they are small, and what they forbid matters to an agent.

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

const SAFE_MIN = Number.MIN_SAFE_INTEGER;
const SAFE_MAX = Number.MAX_SAFE_INTEGER;
// What zod writes for z.iso.date() beside its format.
const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';

// Where a schema holds subschemas (draft-07): the walks below visit only these, never `required`,
// `enum` or `properties` itself (a map of names, not a schema).
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf'] as const;
const SCHEMA_ONE = ['not', 'if', 'then', 'else', 'contains', 'propertyNames', 'additionalItems'] as const;
const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions'] as const;

/** A copy of `schema` with `visit` applied to every subschema, children first (`original`: the node before its children were mapped). */
function mapSchema(schema: Schema, visit: (node: Schema, original: Schema) => Schema): Schema {
  const out: Schema = { ...schema };
  for (const key of SCHEMA_LISTS) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((s) => (isObject(s) ? mapSchema(s, visit) : s));
  for (const key of SCHEMA_ONE) if (isObject(out[key])) out[key] = mapSchema(out[key], visit);
  for (const key of SCHEMA_MAPS) {
    if (isObject(out[key])) out[key] = Object.fromEntries(Object.entries(out[key]).map(([k, s]) => [k, isObject(s) ? mapSchema(s, visit) : s]));
  }
  if (isObject(out.items)) out.items = mapSchema(out.items, visit);
  else if (Array.isArray(out.items)) out.items = out.items.map((s) => (isObject(s) ? mapSchema(s, visit) : s));
  if (isObject(out.additionalProperties)) out.additionalProperties = mapSchema(out.additionalProperties, visit);
  return visit(out, schema);
}

function withoutNoise(node: Schema): Schema {
  const out = { ...node };
  if (out.additionalProperties === false) delete out.additionalProperties;
  if (out.minimum === SAFE_MIN) delete out.minimum;
  if (out.maximum === SAFE_MAX) delete out.maximum;
  if (out.format === 'date' && out.pattern === DATE_PATTERN) delete out.pattern;
  return out;
}

const SCHEMA_COMBINERS = ['$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'const', 'if'];

/** `anyOf: [X, {type: "null"}]` as one schema whose type also allows null, when X is one plain type. */
function nullableAsType(node: Schema): Schema {
  const branches = node.anyOf;
  if (!Array.isArray(branches) || branches.length !== 2) return node;
  const nullAt = branches.findIndex(isNullType);
  if (nullAt === -1) return node;
  const other = branches[1 - nullAt] as Schema;
  if (typeof other.type !== 'string' || SCHEMA_COMBINERS.some((k) => k in other)) return node;
  const { anyOf: _anyOf, description: outer, ...rest } = node;
  const { description: inner, ...body } = other;
  // The use's description (e.g. "Address of the registered office.") says more than the type's.
  const description = outer ?? inner;
  return {
    ...body,
    type: [other.type, 'null'],
    ...(Array.isArray(body.enum) && { enum: [...(body.enum as unknown[]), null] }),
    ...rest,
    ...(description !== undefined && { description }),
  };
}

// JSON with object keys sorted: two subtrees zod wrote alike compare equal whatever their key order.
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value);
}

interface Occurrence {
  node: Schema;
  /** Where it is: the property, or the property whose items it is, for the definition's name. */
  name: string;
}

interface Group {
  /** Compared with their descriptions (shared whole) or without (each use keeps its own). */
  withDescription: boolean;
  /** The compact JSON's length of what the definition would hold. */
  length: number;
  list: Occurrence[];
}

/**
 * Every subschema below the root (definitions' own roots excluded), grouped twice: by itself,
 * and by its body without its description (the same address used as "Address of the registered
 * office." and "Address of the branch").
 */
function occurrences(root: Schema): Map<string, Group> {
  const found = new Map<string, Group>();
  const add = (key: string, withDescription: boolean, occurrence: Occurrence) => {
    const group = found.get(key);
    if (group) group.list.push(occurrence);
    else found.set(key, { withDescription, length: key.length - 1, list: [occurrence] });
  };
  const walk = (node: Schema, name: string, candidate: boolean) => {
    if (candidate) {
      const { description, ...body } = node;
      add(`b${canonical(body)}`, false, { node, name });
      if (description !== undefined) add(`f${canonical(node)}`, true, { node, name });
    }
    for (const key of SCHEMA_LISTS) if (Array.isArray(node[key])) for (const s of node[key] as unknown[]) if (isObject(s)) walk(s, name, true);
    for (const key of SCHEMA_ONE) if (isObject(node[key])) walk(node[key], name, true);
    for (const key of SCHEMA_MAPS) {
      if (!isObject(node[key])) continue;
      for (const [k, s] of Object.entries(node[key])) if (isObject(s)) walk(s, k, key !== 'definitions');
    }
    if (isObject(node.items)) walk(node.items, `${name}Item`, true);
    else if (Array.isArray(node.items)) for (const s of node.items) if (isObject(s)) walk(s, `${name}Item`, true);
    if (isObject(node.additionalProperties)) walk(node.additionalProperties, `${name}Value`, true);
  };
  walk(root, 'schema', false);
  return found;
}

// Named for where it is used, every place when they differ (up to three): `liquidity` sharing a
// definition named `profitability` alone would tell the model it holds profitability ratios.
function nameOf(list: Occurrence[]): string {
  const names = [...new Set(list.map((o) => o.name.replace(/[^A-Za-z0-9_]/g, '_')))];
  return names.slice(0, 3).join('_');
}

const isNullType = (schema: unknown) => isObject(schema) && Object.keys(schema).length === 1 && schema.type === 'null';
const isNullAlternative = (schema: Schema) => Array.isArray(schema.anyOf) && schema.anyOf.some(isNullType);

const refLength = (name: string) => `{"$ref":"#/definitions/${name}"}`.length;

// A shared subtree must save at least this much to be worth the indirection the model reads
// through, and be more than a leaf: a nullable integer behind a $ref saves a few bytes and costs
// the model a lookup.
const MIN_SAVING = 64;
const MIN_LENGTH = 120;

/** Moves repeated subtrees into `definitions`, biggest saving first, until none saves MIN_SAVING bytes. */
function shareRepeated(schema: Schema): Schema {
  let root = schema;
  for (;;) {
    const definitions = isObject(root.definitions) ? root.definitions : {};
    let best: (Group & { saving: number }) | undefined;
    for (const group of occurrences(root).values()) {
      const { list, length } = group;
      if (list.length < 2 || length < MIN_LENGTH) continue;
      const name = nameOf(list);
      const saving = list.length * (length - refLength(name)) - (length + name.length + 4);
      if (saving >= MIN_SAVING && (!best || saving > best.saving)) best = { ...group, saving };
    }
    if (!best) return root;
    const { description: _d, ...body } = best.list[0]!.node;
    // `anyOf: [the company, null]` named `companyOrNull`, not `company`: the name the company itself gets.
    const base = `${nameOf(best.list)}${isNullAlternative(body) ? 'OrNull' : ''}`;
    let name = base;
    for (let n = 2; name in definitions; n++) name = `${base}${n}`;
    const descriptions = new Set(best.list.map((o) => o.node.description));
    // One description everywhere goes into the definition; else each use keeps its own.
    const shared = best.withDescription || descriptions.size === 1 ? best.list[0]!.node.description : undefined;
    const sites = new Set(best.list.map((o) => o.node));
    const ref = `#/definitions/${name}`;
    const replaced = mapSchema(root, (node, original) => {
      if (!sites.has(original)) return node;
      return shared !== undefined || node.description === undefined ? { $ref: ref } : { $ref: ref, description: node.description };
    });
    root = { ...replaced, definitions: { ...(isObject(replaced.definitions) ? replaced.definitions : {}), [name]: { ...body, ...(shared !== undefined && { description: shared }) } } };
  }
}

export function compactOutputSchema(schema: Schema): Schema {
  return mapSchema(shareRepeated(mapSchema(schema, withoutNoise)), nullableAsType);
}
