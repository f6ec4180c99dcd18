/**
 * The JSON Schemas of `schema/`, loaded into one Ajv (draft 2020-12) instance by their `$id`s.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ajv2020 from 'ajv/dist/2020.js';
import { repositoryRoot } from './jp.ts';

// ajv is CommonJS: under NodeNext the default import is its module.exports, whose `default` is the class.
const Ajv2020 = ajv2020.default;

export const schemaDirectory = path.join(repositoryRoot, 'schema');
export const schemaBase = 'https://jp.invalid/schema/';

/** RFC 3339 date-time, as Date.prototype.toISOString() writes it (and with an offset). */
const dateTime =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;

export function loadSchemas(): { name: string; schema: Record<string, unknown> }[] {
  return readdirSync(schemaDirectory)
    .filter((name) => name.endsWith('.schema.json'))
    .sort()
    .map((name) => ({
      name,
      schema: JSON.parse(readFileSync(path.join(schemaDirectory, name), 'utf8')) as Record<string, unknown>,
    }));
}

export function createAjv(options: { withSchemas?: boolean } = {}): InstanceType<typeof Ajv2020> {
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => dateTime.test(value) && !Number.isNaN(Date.parse(value)),
  });
  if (options.withSchemas !== false) for (const { schema } of loadSchemas()) ajv.addSchema(schema);
  return ajv;
}

/** Returns a description of why `value` does not match the schema `file#fragment`, or undefined. */
export function schemaProblem(
  ajv: InstanceType<typeof Ajv2020>,
  reference: string,
  value: unknown,
): string | undefined {
  const validate = ajv.getSchema(`${schemaBase}${reference}`);
  if (!validate) return `no schema ${reference}`;
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}
