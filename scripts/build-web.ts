// Builds the dashboard's front end (web/) into web/dist with Vite, when its sources changed since
// the last build: a hash of web/ (without its outputs) and of the toolkit versions is kept in
// web/dist/.build-hash. `npm start` and `npm test` call it, so a fresh clone needs no extra step;
// `npm run build:web` runs it by hand (`-- --force` to rebuild anyway). The build goes to a
// temporary directory that replaces web/dist at the end, under a lock directory, so processes
// starting side by side (tests) neither clash nor serve half a build.
import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import { brotliCompress, constants as zlib, gzip } from 'node:zlib'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { InlineConfig } from 'vite'

export const WEB_ROOT = resolve(fileURLToPath(new URL('../web', import.meta.url)))
export const WEB_DIST = join(WEB_ROOT, 'dist')
const LOCK = join(WEB_ROOT, '.build.lock')
const HASH_FILE = '.build-hash'

/** The Vite configuration of the dashboard (also what `npx vite build web` would need). */
export function viteConfig(outDir: string): InlineConfig {
  return {
    root: WEB_ROOT,
    base: '/app/',
    configFile: false,
    publicDir: false,
    logLevel: 'warn',
    clearScreen: false,
    // Preact's automatic JSX runtime through Vite's own esbuild transform: no plugin needed.
    esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
    build: { outDir, emptyOutDir: true, target: 'es2022', sourcemap: false, assetsInlineLimit: 0, reportCompressedSize: false },
  }
}

async function files(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('dist') || e.name.startsWith('.build')) continue
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await files(p)))
    else out.push(p)
  }
  return out.sort()
}

const versionOf = (pkg: string) => {
  try {
    return (JSON.parse(readFileSync(resolve(WEB_ROOT, '..', 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return 'missing'
  }
}

export async function sourceHash(): Promise<string> {
  const h = createHash('sha256').update(`vite ${versionOf('vite')} preact ${versionOf('preact')}\n`)
  for (const f of await files(WEB_ROOT)) h.update(relative(WEB_ROOT, f)).update('\0').update(await readFile(f)).update('\0')
  h.update(readFileSync(fileURLToPath(import.meta.url)))
  return h.digest('hex')
}

const builtHash = async () => {
  try {
    return (await readFile(join(WEB_DIST, HASH_FILE), 'utf8')).trim()
  } catch {
    return null
  }
}

async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 180_000
  for (;;) {
    try {
      await mkdir(LOCK)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      // A lock left by a process that died mid-build is taken over after two minutes.
      const st = await stat(LOCK).catch(() => null)
      if (st && Date.now() - st.mtimeMs > 120_000) await rmdir(LOCK).catch(() => {})
      if (Date.now() > deadline) throw new Error(`web build: ${LOCK} is held too long; remove it if no build is running`)
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  try {
    return await fn()
  } finally {
    await rmdir(LOCK).catch(() => {})
  }
}

// Text assets also as .br and .gz beside them, served by @fastify/static (`preCompressed`) to a
// browser that accepts them: written once here instead of compressed on every request.
const COMPRESSIBLE = /\.(js|css|svg|html|json|map)$/
const brotli = promisify(brotliCompress)
const gz = promisify(gzip)
async function precompress(dir: string) {
  for (const f of await files(dir).catch(() => [] as string[])) {
    if (!COMPRESSIBLE.test(f)) continue
    const raw = await readFile(f)
    await writeFile(`${f}.br`, await brotli(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }))
    await writeFile(`${f}.gz`, await gz(raw, { level: 9 }))
  }
}

/**
 * Whether a start builds the dashboard. A production install (the container image: `npm install
 * --omit=dev`) has no vite to build with, and ships the build made where it had one: that build
 * is served as it is (its hash names a vite the install lacks, so it never matches here).
 */
export function needsBuild(o: { force: boolean; hash: string; built: string | null; toolkitInstalled: boolean }): boolean {
  if (o.force) return true
  if (!o.toolkitInstalled && o.built !== null) return false
  return o.built !== o.hash
}

/** Builds web/dist unless it is up to date (or cannot be built here and a build is there); says which. */
export async function buildWeb(o: { force?: boolean; log?: (m: string) => void } = {}): Promise<'built' | 'fresh'> {
  const log = o.log ?? (() => {})
  const hash = await sourceHash()
  if (!needsBuild({ force: !!o.force, hash, built: await builtHash(), toolkitInstalled: versionOf('vite') !== 'missing' })) return 'fresh'
  return withLock(async () => {
    if (!o.force && (await builtHash()) === hash) return 'fresh' as const
    const { build } = await import('vite')
    const tmp = join(WEB_ROOT, `.build-${process.pid}-${Date.now()}`)
    const started = Date.now()
    try {
      await build(viteConfig(tmp))
      await precompress(join(tmp, 'assets'))
      await writeFile(join(tmp, HASH_FILE), hash + '\n')
      const old = `${WEB_DIST}.old-${process.pid}`
      if (existsSync(WEB_DIST)) await rename(WEB_DIST, old)
      await rename(tmp, WEB_DIST)
      await rm(old, { recursive: true, force: true })
    } finally {
      await rm(tmp, { recursive: true, force: true })
    }
    log(`dashboard built into ${relative(process.cwd(), WEB_DIST) || WEB_DIST} in ${Date.now() - started} ms`)
    return 'built' as const
  })
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = await buildWeb({ force: process.argv.includes('--force'), log: console.log })
  if (r === 'fresh') console.log('dashboard is up to date (web/dist)')
}
