// Published transcripts and captions (WebVTT, SubRip, the Podcasting 2.0 JSON transcript) read
// into cues, and speaker labels assigned A, B, C... in order of first appearance. Pure: the
// pipeline fetches or extracts the text, this file only reads it.

export interface Cue {
  startMs: number
  endMs: number
  text: string
  /** The speaker's name as the source gives it (a VTT `<v Name>` tag, a JSON `speaker`). */
  speaker: string | null
}

export type CaptionFormat = 'vtt' | 'srt' | 'json'

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', nbsp: ' ', quot: '"', apos: "'", lrm: '', rlm: '' }
const decodeEntities = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)
      return Number.isFinite(code) ? String.fromCodePoint(code) : m
    }
    return ENTITIES[e.toLowerCase()] ?? m
  })

const clean = (s: string) => decodeEntities(s.replace(/<[^>]*>/g, '')).replace(/\s+/g, ' ').trim()

/** `hh:mm:ss.ttt`, `mm:ss.ttt` (VTT) or `hh:mm:ss,ttt` (SRT) to milliseconds; NaN when malformed. */
export function parseTimestamp(s: string): number {
  const m = /^(?:(\d+):)?(\d{1,2}):(\d{1,2})[.,](\d{1,3})$/.exec(s.trim())
  if (!m) return NaN
  const [, h, min, sec, frac] = m
  return ((Number(h ?? 0) * 60 + Number(min)) * 60 + Number(sec)) * 1000 + Number(frac!.padEnd(3, '0'))
}

const TIMING = /^\s*(\S+)\s+-->\s+(\S+)/

export function parseVtt(text: string): Cue[] {
  const lines = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n').split('\n')
  if (!/^WEBVTT/.test(lines[0] ?? '')) throw new Error('not a WebVTT file (no WEBVTT header)')
  const cues: Cue[] = []
  let i = 1
  while (i < lines.length) {
    // A block runs to the next blank line: NOTE, STYLE and REGION blocks carry no cue.
    const block: string[] = []
    while (i < lines.length && lines[i]!.trim() === '') i++
    while (i < lines.length && lines[i]!.trim() !== '') block.push(lines[i++]!)
    if (block.length === 0) continue
    const t = block.findIndex((l) => l.includes('-->'))
    if (t === -1 || /^(NOTE|STYLE|REGION)\b/.test(block[0]!)) continue
    const m = TIMING.exec(block[t]!)
    if (!m) continue
    const startMs = parseTimestamp(m[1]!)
    const endMs = parseTimestamp(m[2]!)
    if (!Number.isFinite(startMs) || !Number.isFinite(endMs)) continue
    const payload = block.slice(t + 1).join('\n')
    const voice = /<v(?:\.[^\s>]+)*\s+([^>]+)>/.exec(payload)
    const body = clean(payload)
    if (!body) continue
    cues.push({ startMs, endMs: Math.max(startMs, endMs), text: body, speaker: voice ? clean(voice[1]!) || null : null })
  }
  return withNamePrefixes(cues)
}

export function parseSrt(text: string): Cue[] {
  const blocks = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n').split(/\n\s*\n/)
  const cues: Cue[] = []
  for (const b of blocks) {
    const lines = b.split('\n').filter((l) => l.trim() !== '')
    const t = lines.findIndex((l) => l.includes('-->'))
    if (t === -1) continue
    const m = TIMING.exec(lines[t]!)
    if (!m) continue
    const startMs = parseTimestamp(m[1]!)
    const endMs = parseTimestamp(m[2]!)
    const body = clean(lines.slice(t + 1).join('\n'))
    if (!Number.isFinite(startMs) || !Number.isFinite(endMs) || !body) continue
    cues.push({ startMs, endMs: Math.max(startMs, endMs), text: body, speaker: null })
  }
  if (cues.length === 0 && text.trim() !== '') throw new Error('not a SubRip file (no cue timings)')
  return withNamePrefixes(cues)
}

// `Alice Walker: Hello.`, `ALICE: Hello.`, `>> Bob: Hi.`, `- Dr. Ana García: Hola.`: one to four
// capitalised words (letters of any script, dots, apostrophes, hyphens) and a colon.
const NAME_PREFIX = /^(?:>>\s*|-\s*)?((?:\p{Lu}[\p{L}\p{M}.'’-]*)(?:\s+\p{Lu}[\p{L}\p{M}.'’-]*){0,3}):\s+(\S.*)$/u
// Words that open a caption line with a colon without naming who speaks.
const NOT_NAMES = new Set(['note', 'notes', 'warning', 'update', 'music', 'applause', 'laughter', 'narrator note', 'chapter', 'part', 'step', 'question', 'answer', 'q', 'a', 'ps', 'nb', 'tip', 'edit', 'source', 'translation', 'subtitle', 'subtitles', 'caption', 'captions'])

/**
 * Captions that say who speaks as a `Name: ` prefix (SubRip has no voice tags) get that name as
 * their speaker, and the prefix leaves the text. A cue without a prefix continues the previous
 * cue's speaker. Only when the prefixes look like a convention: one name opening at least two
 * cues, or prefixes on at least half of the cues; otherwise a stray `Note: ...` would become a
 * speaker. Cues that already carry a speaker (voice tags) are left as they are.
 */
export function withNamePrefixes(cues: Cue[]): Cue[] {
  if (cues.some((c) => c.speaker !== null)) return cues
  const found = cues.map((c) => {
    const m = NAME_PREFIX.exec(c.text)
    if (!m || NOT_NAMES.has(m[1]!.toLowerCase())) return null
    return { name: m[1]!.replace(/\s+/g, ' '), rest: m[2]!.trim() }
  })
  // `ALICE:` and `Alice:` are one speaker, named as first written.
  const spelling = new Map<string, string>()
  const counts = new Map<string, number>()
  for (const f of found) {
    if (!f) continue
    const key = f.name.toLocaleLowerCase()
    f.name = spelling.get(key) ?? (spelling.set(key, f.name), f.name)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  const prefixed = found.filter(Boolean).length
  const repeated = [...counts.values()].some((n) => n >= 2)
  if (prefixed === 0 || (!repeated && prefixed * 2 < cues.length)) return cues
  let current: string | null = null
  return cues.map((c, i) => {
    const f = found[i]
    if (f) current = f.name
    return f ? { ...c, text: f.rest, speaker: f.name } : { ...c, speaker: current }
  })
}

/** The Podcasting 2.0 JSON transcript: `{ segments: [{ speaker?, startTime, endTime, body }] }`, times in seconds. */
export function parsePodcastJson(text: string): Cue[] {
  const doc = JSON.parse(text) as { segments?: unknown }
  if (!doc || !Array.isArray(doc.segments)) throw new Error('not a podcast JSON transcript (no segments array)')
  const cues: Cue[] = []
  for (const s of doc.segments as Record<string, unknown>[]) {
    const start = Number(s?.startTime)
    const end = Number(s?.endTime)
    const body = typeof s?.body === 'string' ? clean(s.body) : ''
    if (!Number.isFinite(start) || !Number.isFinite(end) || !body) continue
    cues.push({ startMs: Math.round(start * 1000), endMs: Math.round(Math.max(start, end) * 1000), text: body, speaker: typeof s.speaker === 'string' && s.speaker.trim() ? s.speaker.trim() : null })
  }
  return cues
}

export function parseCaptions(format: CaptionFormat, text: string): Cue[] {
  const cues = format === 'vtt' ? parseVtt(text) : format === 'srt' ? parseSrt(text) : parsePodcastJson(text)
  return cues.sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs)
}

/** The caption format a MIME type (podcast:transcript `type`) names, or null for ones we do not read (html, plain text). */
export function captionFormatOf(mime: string | null | undefined): CaptionFormat | null {
  const t = (mime ?? '').toLowerCase().split(';')[0]!.trim()
  if (t === 'text/vtt' || t === 'text/webvtt') return 'vtt'
  if (t === 'application/x-subrip' || t === 'application/srt' || t === 'text/srt' || t === 'application/x-srt') return 'srt'
  if (t === 'application/json' || t === 'text/json') return 'json'
  return null
}

/** The n-th speaker label: A..Z, then AA, AB, ... */
export function speakerLabel(n: number): string {
  let label = ''
  let i = n
  do {
    label = String.fromCharCode(65 + (i % 26)) + label
    i = Math.floor(i / 26) - 1
  } while (i >= 0)
  return label
}

/**
 * Labels for the speaker ids a source gives (names, provider ids), A, B, C... in order of first
 * appearance; null stays null: a speaker nobody detected is not invented.
 */
export function assignSpeakerLabels(ids: readonly (string | null)[]): { labels: (string | null)[]; names: Map<string, string> } {
  const byId = new Map<string, string>()
  const labels = ids.map((id) => {
    if (id === null) return null
    let label = byId.get(id)
    if (!label) byId.set(id, (label = speakerLabel(byId.size)))
    return label
  })
  const names = new Map<string, string>()
  for (const [id, label] of byId) names.set(label, id)
  return { labels, names }
}
