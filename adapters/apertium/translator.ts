// The local translation engine: Apertium (rule-based machine translation, Debian packages
// `apertium` plus one package per language pair). No model download: the pairs are data
// packages from the distribution. Debian has en↔es, es↔pt, es↔fr and es↔it, so other pairs of
// the six go through Spanish (two passes; quality drops with each), and German has no pair at
// all: the capability lists the pairs there are, so a request for another is refused when made
// (`translation_pair_unsupported`, naming what to configure). Its output is tidied (stray spaces,
// capitals mid-sentence: domain/transcripts/tidyTranslation.ts).
// This file is the only one that runs the `apertium` binary.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TranslationError, type SegmentText, type TranslateRequest, type Translator } from '../../ports/translator.ts'
import { TRANSLATION_LANGUAGES } from '../../domain/languages.ts'
import { unsupportedPair, type TranslationCapability } from '../../domain/transcripts/translationPairs.ts'
import { tidyMachineTranslation } from '../../domain/transcripts/tidyTranslation.ts'

const ISO3: Record<string, string> = { eng: 'en', spa: 'es', fra: 'fr', fre: 'fr', ita: 'it', por: 'pt', deu: 'de', ger: 'de' }
const code = (c: string) => ISO3[c] ?? c

export interface ApertiumOptions {
  /** The binary (default `apertium` on PATH). */
  bin?: string
  timeoutMs?: number
}

function run(bin: string, args: string[], input: string, timeoutMs: number, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'], signal, timeout: timeoutMs })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (d: Buffer) => out.push(d))
    child.stderr.on('data', (d: Buffer) => err.push(d))
    child.on('error', reject)
    child.on('close', (status) => {
      if (status === 0) resolve(Buffer.concat(out).toString('utf8'))
      else reject(new Error(`${bin} ${args.join(' ')} exited with ${status}: ${Buffer.concat(err).toString('utf8').slice(0, 300)}`))
    })
    child.stdin.on('error', () => {})
    child.stdin.end(input, 'utf8')
  })
}

/**
 * The language pairs installed, as `from → to → mode`, from `apertium -l`. Only plain pair
 * modes count (`eng-spa`, `es-pt`); variants (`es-pt_BR`), debug and other modes are ignored.
 */
export async function installedPairs(bin = 'apertium'): Promise<Map<string, Map<string, string>>> {
  const listing = await run(bin, ['-l'], '', 10_000)
  const pairs = new Map<string, Map<string, string>>()
  for (const raw of listing.split('\n')) {
    const mode = raw.trim()
    const m = /^([a-z]{2,3})-([a-z]{2,3})$/.exec(mode)
    if (!m) continue
    const from = code(m[1]!)
    const to = code(m[2]!)
    if (!pairs.has(from)) pairs.set(from, new Map())
    // Prefer the three-letter mode names (newer packages) when both exist.
    if (!pairs.get(from)!.has(to) || mode.length > pairs.get(from)!.get(to)!.length) pairs.get(from)!.set(to, mode)
  }
  return pairs
}

/** The modes to chain for from → to: direct, or through one pivot language. */
export function route(pairs: Map<string, Map<string, string>>, from: string, to: string): string[] | null {
  const direct = pairs.get(from)?.get(to)
  if (direct) return [direct]
  for (const [pivot, first] of pairs.get(from) ?? []) {
    const second = pairs.get(pivot)?.get(to)
    if (second) return [first, second]
  }
  return null
}

export async function apertiumTranslator(options: ApertiumOptions = {}): Promise<Translator | null> {
  const bin = options.bin ?? 'apertium'
  const timeoutMs = options.timeoutMs ?? 120_000
  let pairs: Map<string, Map<string, string>>
  try {
    pairs = await installedPairs(bin)
  } catch {
    return null // not installed
  }
  if (pairs.size === 0) return null
  const capability: TranslationCapability = {
    engine: 'apertium',
    model: null,
    pairs: [...pairs.keys()].flatMap((from) => TRANSLATION_LANGUAGES.filter((to) => to !== from && route(pairs, from, to)).map((to) => ({ from, to }))),
    missingPairsHint: 'For the other pairs (Debian has no Apertium pair for German), configure LLM_BASE_URL for an OpenAI-compatible model.',
  }

  async function translateLines(modes: string[], lines: string[], signal?: AbortSignal): Promise<string[]> {
    let current = lines
    for (const mode of modes) {
      // One segment per line: Apertium keeps line breaks where they were. The input goes in a
      // file: the apertium script opens /dev/stdin, which fails on the socket Node gives a child.
      const dir = mkdtempSync(join(tmpdir(), 'apertium-'))
      let raw: string
      try {
        writeFileSync(join(dir, 'in.txt'), `${current.join('\n')}\n`)
        raw = await run(bin, ['-u', mode, join(dir, 'in.txt')], '', timeoutMs, signal)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
      const out = raw.replace(/\n$/, '').split('\n')
      if (out.length !== current.length) throw new Error(`apertium ${mode} returned ${out.length} lines for ${current.length}`)
      current = out.map((l) => l.trim())
    }
    return current
  }

  return {
    engine: 'apertium',
    model: null,
    capability,
    async translate(req: TranslateRequest): Promise<SegmentText[]> {
      const problem = unsupportedPair(capability, req.from, req.to)
      if (problem) throw new TranslationError('translation_pair_unsupported', problem)
      const modes = route(pairs, req.from!, req.to)!
      const out: SegmentText[] = []
      const CHUNK = 200
      for (let i = 0; i < req.segments.length; i += CHUNK) {
        const chunk = req.segments.slice(i, i + CHUNK)
        const texts = chunk.map((s) => s.text.replace(/\s*[\r\n]+\s*/g, ' ').trim())
        // Empty segments stay empty; only the others go through Apertium.
        const filled = texts.map((text, k) => ({ text, k })).filter((x) => x.text.length > 0)
        let lines: string[] = []
        try {
          if (filled.length > 0) lines = await translateLines(modes, filled.map((x) => x.text), req.signal)
        } catch (err) {
          throw new TranslationError('translation_engine_failed', `Apertium failed: ${(err as Error).message}`)
        }
        const byIndex = new Map(filled.map((x, j) => [x.k, tidyMachineTranslation(x.text, lines[j]!, req.to)]))
        chunk.forEach((s, k) => out.push({ sequence: s.sequence, text: byIndex.get(k) ?? '' }))
      }
      return out
    },
  }
}
