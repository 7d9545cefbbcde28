// Speakers of one note: the names the user gave, the names inferred from the content and the
// source, and voice matches against the user's voice profiles. The transcript never stores a
// name: names resolve at read time from this state, so a rename never rewrites the transcript.
//
// The name in use (`name`), in order:
// 1. a name the user gave (`nameStatus: confirmed`), which nothing else ever overwrites;
// 2. the best inferred candidate (content and metadata, or a voice profile) whose confidence is
//    at least NAME_CONFIDENCE_THRESHOLD (`nameStatus: suggested`); a name the source published
//    with the transcript (a VTT voice tag, an SRT `Name:` prefix) is a candidate of confidence 1,
//    with `published` evidence: the source says who speaks, but the user has not confirmed it;
// 3. none. `suggestedName`, `suggestedNameConfidence` and `evidence` show the inference anyway.
//
// That name is the one every output shows (transcript and exports, timeline, analyses, answers,
// deliverables, MCP tools, webhooks): they all read it through readmodels/speakerNames.ts.

/** An inferred name becomes the name in use from this confidence on (docs/speech.md, "Speakers"). */
export const NAME_CONFIDENCE_THRESHOLD = 0.8

export type EvidenceSource = 'transcript' | 'metadata' | 'roster' | 'voice' | 'published'

export interface Evidence {
  source: EvidenceSource
  /** The segment `sequence` when source is `transcript`; null otherwise. */
  segment: number | null
  /** The words that support the name; for `voice`, the profile name. */
  quote: string
  /** For `voice`: cosine similarity with the profile, 0 to 1. */
  similarity?: number
}

export interface InferredName {
  name: string
  confidence: number
  evidence: Evidence[]
}

export interface VoiceMatch {
  profileId: string
  profileName: string
  similarity: number
}

export interface SpeakerState {
  label: string
  /** Given by the user (PATCH); never overwritten by inference. */
  confirmedName: string | null
  inferred: InferredName | null
  voice: VoiceMatch | null
  voiceExcluded: boolean
  /** The name the published transcript gives this label; absent in read models written before it existed. */
  published?: string | null
}

export const emptySpeaker = (label: string): SpeakerState => ({ label, confirmedName: null, inferred: null, voice: null, voiceExcluded: false, published: null })

/**
 * Where the name in use comes from, finer than the spec's `nameStatus` (which says `suggested`
 * for both `suggested` and `voice-matched`): `voice-matched` is an inferred name that a voice
 * profile's name carries or supports; `none`: no name is in use.
 */
export type NameStatus = 'confirmed' | 'voice-matched' | 'suggested' | 'none'

/** A speaker's name as the outputs show it. */
export interface SpeakerName {
  label: string
  name: string | null
  status: NameStatus
}

/** A note's speaker names by label: what a label reads as wherever an output names a speaker. */
export type SpeakerNames = ReadonlyMap<string, SpeakerName>

export interface SpeakerView {
  label: string
  name: string | null
  nameStatus: 'confirmed' | 'suggested' | null
  status: NameStatus
  suggestedName: string | null
  suggestedNameConfidence: number | null
  voiceExcluded: boolean
  evidence: Evidence[]
}

const round3 = (n: number) => Math.round(n * 1000) / 1000
const nameKey = (name: string) => name.normalize('NFC').toLocaleLowerCase()

export function viewSpeaker(s: SpeakerState): SpeakerView {
  const voice = s.voice && !s.voiceExcluded ? s.voice : null
  const candidates: { name: string; confidence: number }[] = []
  if (s.published) candidates.push({ name: s.published, confidence: 1 })
  if (s.inferred) candidates.push({ name: s.inferred.name, confidence: s.inferred.confidence })
  if (voice) candidates.push({ name: voice.profileName, confidence: voice.similarity })
  // The strongest candidate; when content and voice agree on a name, they support each other.
  let best = candidates.sort((a, b) => b.confidence - a.confidence)[0] ?? null
  if (best && !s.published && candidates.length === 2 && candidates[0]!.name.toLowerCase() === candidates[1]!.name.toLowerCase()) {
    best = { name: best.name, confidence: 1 - (1 - candidates[0]!.confidence) * (1 - candidates[1]!.confidence) }
  }
  const evidence: Evidence[] = [...(s.published ? [{ source: 'published' as const, segment: null, quote: s.published }] : []), ...(s.inferred?.evidence ?? [])]
  if (voice) evidence.push({ source: 'voice', segment: null, quote: voice.profileName, similarity: round3(voice.similarity) })
  const suggested = best && best.confidence >= NAME_CONFIDENCE_THRESHOLD ? best.name : null
  const byVoice = !!suggested && !!voice && nameKey(voice.profileName) === nameKey(suggested)
  return {
    label: s.label,
    name: s.confirmedName ?? suggested,
    nameStatus: s.confirmedName ? 'confirmed' : suggested ? 'suggested' : null,
    status: s.confirmedName ? 'confirmed' : byVoice ? 'voice-matched' : suggested ? 'suggested' : 'none',
    suggestedName: best?.name ?? null,
    suggestedNameConfidence: best ? round3(best.confidence) : null,
    voiceExcluded: s.voiceExcluded,
    evidence,
  }
}

/**
 * The speakers of one note, viewed together: one person's name goes to one speaker. A name the
 * user gave holds it; otherwise, of the speakers a name was inferred for (two voices resembling
 * one profile, or content and voice disagreeing), only the most confident one (then the first
 * label) keeps it as its `name`; the others keep it as `suggestedName` with their evidence.
 */
export function viewSpeakers(states: readonly SpeakerState[]): SpeakerView[] {
  const views = states.map(viewSpeaker)
  const held = new Set(views.filter((v) => v.nameStatus === 'confirmed').map((v) => nameKey(v.name!)))
  const inferred = views
    .filter((v) => v.nameStatus === 'suggested')
    .sort((a, b) => (b.suggestedNameConfidence ?? 0) - (a.suggestedNameConfidence ?? 0) || a.label.localeCompare(b.label))
  for (const v of inferred) {
    const key = nameKey(v.name!)
    if (!held.has(key)) {
      held.add(key)
      continue
    }
    v.name = null
    v.nameStatus = null
    v.status = 'none'
  }
  return views
}

export const speakerNameOf = (v: SpeakerView): SpeakerName => ({ label: v.label, name: v.name, status: v.status })

/** What a name inference produced for one label (before the rules decide what changes). */
export interface NameSuggestion {
  label: string
  name: string | null
  confidence: number | null
  evidence: Evidence[]
}
