// The layer table of docs/DEVELOPING.md, enforced: no import breaks it and no import cycle exists
// (scripts/check-layers.ts). The checker itself is tried on a small tree that breaks both rules.
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkLayers } from '../scripts/check-layers.ts'
import { tempDir } from './support/tmp.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

t.test('no import breaks the layer table, and no module imports itself through a cycle', async (t) => {
  const r = checkLayers(root)
  t.ok(r.files > 200, `${r.files} modules read`)
  t.same(r.violations, [], 'imports the layer table forbids')
  t.same(r.cycles, [], 'import cycles')
})

t.test('the checker finds a forbidden import, a type-only one and a cycle', async (t) => {
  const tmp = tempDir('layers-')
  t.teardown(tmp.remove)
  const file = (path: string, text: string) => {
    mkdirSync(dirname(join(tmp.dir, path)), { recursive: true })
    writeFileSync(join(tmp.dir, path), text)
  }
  file('domain/a.ts', "import { b } from './b.ts'\nexport const a = b\n")
  file('domain/b.ts', "export { a as b } from './a.ts'\n")
  file('commands/c.ts', "import type { X } from '../readmodels/x.ts'\nimport { waitFor } from '../projections/sync.ts'\n")
  file('readmodels/x.ts', "export type X = number\n")
  file('projections/sync.ts', "export const waitFor = 1\n")
  file('api/r.ts', "const m = await import('../app/s.ts')\n")
  file('app/s.ts', "import { a } from '../domain/a.ts'\n")
  const r = checkLayers(tmp.dir)
  t.same(r.violations, ['api/r.ts -> app/s.ts', 'commands/c.ts -> readmodels/x.ts'])
  t.same(r.cycles, [['domain/a.ts', 'domain/b.ts', 'domain/a.ts']])
})
