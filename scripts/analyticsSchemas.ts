// Writes the JSON Schema of every published analytics event type to contract/analytics/, from
// the contract in domain/analytics/contract.ts (`npm run analytics-schemas`). The files are
// committed: they are what consumers read; test/analytics.contract.test.ts fails when they
// differ from what this script would write.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { eventJsonSchema, publishedTypes } from '../domain/analytics/contract.ts'

export const SCHEMA_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'contract', 'analytics')

/** File name -> content, for every published event type. */
export function analyticsSchemaFiles(): Map<string, string> {
  return new Map(publishedTypes().map((type) => [`${type}.schema.json`, JSON.stringify(eventJsonSchema(type), null, 2) + '\n']))
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  mkdirSync(SCHEMA_DIR, { recursive: true })
  const files = analyticsSchemaFiles()
  for (const old of readdirSync(SCHEMA_DIR)) if (old.endsWith('.schema.json') && !files.has(old)) rmSync(join(SCHEMA_DIR, old))
  for (const [name, text] of files) writeFileSync(join(SCHEMA_DIR, name), text)
  console.log(`wrote ${files.size} schemas to ${SCHEMA_DIR}`)
}
