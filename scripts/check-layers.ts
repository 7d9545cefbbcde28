// The layer check: every relative import between the source folders must be allowed by the
// layer table (docs/DEVELOPING.md, "Layers"; the same table is `LAYERS` below), and no module
// may reach itself through its imports (a cycle). Type-only imports count: a type still ties a
// module to the folder it comes from. `test/architecture.test.ts` runs it inside `npm test`;
// `npx tsx scripts/check-layers.ts` prints the report.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Folder (or one file, which then has its own rule) -> the folders (or single files) its modules
 * may import besides their own folder.
 */
export const LAYERS: Readonly<Record<string, readonly string[]>> = {
  domain: [],
  contract: ['domain'],
  ports: ['domain'],
  adapters: ['ports', 'domain', 'contract'],
  engines: ['ports', 'domain'],
  projections: ['ports', 'domain', 'contract'],
  // Queries take the `Caller` the commands take, and implement the read ports the commands declare.
  readmodels: ['projections', 'ports', 'domain', 'contract', 'commands/context.ts', 'commands/reads.ts'],
  // The read-your-writes wait is the one piece of the read side a command may use.
  commands: ['ports', 'domain', 'contract', 'projections/sync.ts'],
  // The application facade names the query objects next to the command services.
  'commands/application.ts': ['readmodels', 'ports', 'domain', 'contract', 'projections/sync.ts'],
  workers: ['commands', 'projections', 'ports', 'domain', 'contract'],
  api: ['commands', 'readmodels', 'ports', 'domain', 'contract'],
  // MCP uses the REST edge's HTTP kit (api/http/) and schemas; never the other way round.
  mcp: ['api', 'commands', 'readmodels', 'ports', 'domain', 'contract'],
  app: ['api', 'mcp', 'workers', 'commands', 'readmodels', 'projections', 'engines', 'adapters', 'ports', 'domain', 'contract'],
}

export interface LayerReport {
  files: number
  imports: number
  /** `from -> to` of every import the table does not allow. */
  violations: string[]
  /** Each cycle as the modules on it, the first repeated at the end. */
  cycles: string[][]
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm

function sources(root: string): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (/\.tsx?$/.test(e.name)) out.push(p)
    }
  }
  for (const folder of Object.keys(LAYERS)) if (!folder.includes('/') && existsSync(join(root, folder))) walk(folder)
  return out.sort()
}

export function importsOf(root: string, file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
  const out: string[] = []
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3]
    if (spec?.startsWith('.')) out.push(normalize(join(dirname(file), spec)))
  }
  return out
}

const allowed = (from: string, to: string): boolean => {
  const a = from.split('/')[0]!
  const b = to.split('/')[0]!
  if (a === b) return true
  if (!(b in LAYERS)) return true // scripts, package.json...: not a layer
  return (LAYERS[from] ?? LAYERS[a] ?? []).some((x) => x === b || x === to)
}

/** Tarjan's strongly connected components; each component of more than one module is a cycle. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let index = 0
  const idx = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const on = new Set<string>()
  const out: string[][] = []
  const visit = (v: string) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    on.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = []
      let w: string
      do {
        w = stack.pop()!
        on.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push([...scc.reverse(), scc[0]!])
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v)
  return out
}

export function checkLayers(root: string): LayerReport {
  const files = sources(root)
  const graph = new Map<string, string[]>()
  const violations: string[] = []
  let imports = 0
  for (const f of files) {
    const targets = importsOf(root, f)
    imports += targets.length
    graph.set(f, targets)
    for (const t of targets) if (!allowed(f, t)) violations.push(`${f} -> ${t}`)
  }
  // The folders' own graph must be acyclic too, or the table could not be read as layers.
  const folders = new Map(Object.entries(LAYERS).filter(([k]) => !k.includes('/')).map(([k, v]) => [k, v.map((x) => x.split('/')[0]!)]))
  const tableCycles = cyclesOf(folders).map((c) => c.map((x) => `${x}/ (layer table)`))
  return { files: files.length, imports, violations, cycles: [...tableCycles, ...cyclesOf(graph)] }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = relative(process.cwd(), join(dirname(fileURLToPath(import.meta.url)), '..')) || '.'
  const r = checkLayers(root)
  for (const v of r.violations) console.log(`layer: ${v}`)
  for (const c of r.cycles) console.log(`cycle: ${c.join(' -> ')}`)
  console.log(`${r.files} modules, ${r.imports} imports: ${r.violations.length} break the layer table, ${r.cycles.length} cycles`)
  process.exitCode = r.violations.length + r.cycles.length > 0 ? 1 : 0
}
