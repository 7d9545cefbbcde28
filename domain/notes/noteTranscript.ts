// The transcript side of a note: edits of its text, its speakers' names and its translations.
// Same stream as the note (`note-<noteId>`), so an edit, a rename or a translation is ordered
// with the transcription that produced the text; this decider folds the note's own events for
// what it needs (owner, phase, title, source, transcript) and decides the transcript commands.
//
// Translation state per language: none (no events) → pending (requested) → running (a worker
// claimed it) → ready or failed. `stale` is not a status: a ready translation whose transcript
// changed afterwards lists the changed segments in `staleSegments`; their translations are gone
// ("missing again") until a new request translates just those.
import { shownWhole, type ContentLimit } from '../transcripts/preview.ts'
import { createHash } from 'node:crypto'
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { baseLanguage, type TranslationLanguage } from '../languages.ts'
import type { NoteEvent } from './note.ts'
import { firstSpeakerLabel, type Transcript, type TranscriptSegment } from './transcript.ts'
import { planReplacement, type SegmentChange } from '../transcripts/replace.ts'
import { nextSpeakerLabel } from '../speakers/labels.ts'
import { unsupportedPair, type TranslationCapability } from '../transcripts/translationPairs.ts'
import type { SourceMetadata } from '../speakers/sourceKey.ts'
import { emptySpeaker, NAME_CONFIDENCE_THRESHOLD, type NameSuggestion, type SpeakerState, type VoiceMatch } from '../speakers/speakers.ts'

export { noteStream } from './note.ts'

/** Identifies the text a translation was made from, so a translation of an older text is never taken for the current one. */
export const sourceHash = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex').slice(0, 16)

// ---- events ---------------------------------------------------------------------------------

type At = { at: string }
export type TranscriptTextReplaced = DomainEvent<
  'TranscriptTextReplaced',
  {
    find: string
    replace: string
    caseSensitive: boolean
    wholeWord: boolean
    occurrences: number
    changes: SegmentChange[]
    /** Ready translations that lost the changed segments' translations. */
    staleTranslations: { language: string; segments: number[] }[]
  } & At
>
/** One line given to another speaker; its times ride along so talk time follows without the segments. */
export interface LineSpeakerChange {
  segmentId: string
  sequence: number
  startMs: number
  endMs: number
  from: string | null
  to: string
}
/**
 * A person gave lines to another speaker: one line the diarizer heard as the wrong voice, or every
 * line of a speaker that is someone else too (a merge). `firstLabel` is the label of the note's
 * first line with a speaker afterwards (the roster's first speaker).
 */
export type SegmentSpeakersChanged = DomainEvent<'SegmentSpeakersChanged', { changes: LineSpeakerChange[]; firstLabel: string | null } & At>
/** Show or channel metadata the pipeline learnt about the note's source (optional). */
export type NoteSourceMetadataRecorded = DomainEvent<'NoteSourceMetadataRecorded', { metadata: SourceMetadata } & At>
export type SpeakerRenamed = DomainEvent<'SpeakerRenamed', { label: string; name: string; previousName: string | null; sourceKey: string | null } & At>
export type SpeakerNamesSuggested = DomainEvent<
  'SpeakerNamesSuggested',
  { engine: string; model: string | null; threshold: number; suggestions: (NameSuggestion & { applied: boolean })[] } & At
>
/** `profileId`: set when the exclusion comes from 'do not recognise this person' on that voice profile. */
export type SpeakerVoiceExclusionChanged = DomainEvent<'SpeakerVoiceExclusionChanged', { label: string; excluded: boolean; profileId?: string } & At>
export type SpeakerVoiceMatched = DomainEvent<'SpeakerVoiceMatched', { label: string; match: VoiceMatch | null } & At>
export type TranslationRequested = DomainEvent<
  'TranslationRequested',
  { language: TranslationLanguage; sourceLanguage: string | null; segments: number[]; totalSegments: number; requestId: string | null } & At
>
export type TranslationStarted = DomainEvent<'TranslationStarted', { language: TranslationLanguage; engine: string; model: string | null; attempt: number } & At>
export type TranslationSegmentsTranslated = DomainEvent<
  'TranslationSegmentsTranslated',
  { language: TranslationLanguage; segments: { sequence: number; text: string; sourceHash: string }[] } & At
>
export type TranslationCompleted = DomainEvent<'TranslationCompleted', { language: TranslationLanguage; staleSegments: number[] } & At>
export type TranslationFailed = DomainEvent<'TranslationFailed', { language: TranslationLanguage; errorCode: string; message: string } & At>

export type TranscriptEvent =
  | TranscriptTextReplaced
  | SegmentSpeakersChanged
  | NoteSourceMetadataRecorded
  | SpeakerRenamed
  | SpeakerNamesSuggested
  | SpeakerVoiceExclusionChanged
  | SpeakerVoiceMatched
  | TranslationRequested
  | TranslationStarted
  | TranslationSegmentsTranslated
  | TranslationCompleted
  | TranslationFailed

export const TRANSCRIPT_EVENT_TYPES: readonly TranscriptEvent['type'][] = [
  'TranscriptTextReplaced',
  'SegmentSpeakersChanged',
  'NoteSourceMetadataRecorded',
  'SpeakerRenamed',
  'SpeakerNamesSuggested',
  'SpeakerVoiceExclusionChanged',
  'SpeakerVoiceMatched',
  'TranslationRequested',
  'TranslationStarted',
  'TranslationSegmentsTranslated',
  'TranslationCompleted',
  'TranslationFailed',
]

// ---- commands -------------------------------------------------------------------------------

type Now = { now: string }
export type TranscriptCommand =
  /** `preview`: the caller's plan shows only a preview, and only what it shows in full is edited and counted. */
  | ({ type: 'ReplaceInTranscript'; accountId: string; find: string; replace: string; caseSensitive: boolean; wholeWord: boolean; preview?: ContentLimit } & Now)
  /** `to`: one of the transcript's speakers, or null for a new one (a voice the diarizer missed). */
  | ({ type: 'ChangeSegmentSpeaker'; accountId: string; sequence: number; to: string | null; preview?: ContentLimit } & Now)
  /** Every line of `from` to `into`: two labels the diarizer made of one person. */
  | ({ type: 'MergeSpeaker'; accountId: string; from: string; into: string } & Now)
  /** The last move or merge given back (undoing an undo redoes it). */
  | ({ type: 'UndoLineSpeakers'; accountId: string } & Now)
  | ({ type: 'RecordSourceMetadata'; metadata: SourceMetadata } & Now)
  | ({ type: 'RenameSpeaker'; accountId: string; label: string; name: string; sourceKey: string | null } & Now)
  | ({ type: 'RecordNameSuggestions'; accountId: string; engine: string; model: string | null; suggestions: NameSuggestion[] } & Now)
  | ({ type: 'SetSpeakerVoiceExclusion'; accountId: string; label: string; excluded: boolean } & Now)
  | ({ type: 'RecordVoiceMatch'; label: string; match: VoiceMatch | null } & Now)
  /**
   * 'Do not recognise this person' set on a voice profile reaches this note: the speakers matched
   * to that profile and those enrolled from it (`enrolledLabels`, the profile's appearances here).
   */
  | ({ type: 'ExcludeProfileVoice'; profileId: string; enrolledLabels: string[] } & Now)
  /** `capability`: what the installed engine translates; new work for a pair it cannot do is refused. */
  | ({ type: 'RequestTranslation'; accountId: string; language: TranslationLanguage; requestId: string | null; capability: TranslationCapability } & Now)
  | ({ type: 'StartTranslation'; language: TranslationLanguage; engine: string; model: string | null; leaseMs: number } & Now)
  | ({ type: 'RecordTranslatedSegments'; language: TranslationLanguage; segments: { sequence: number; text: string; sourceHash: string }[] } & Now)
  | ({ type: 'CompleteTranslation'; language: TranslationLanguage } & Now)
  | ({ type: 'FailTranslation'; language: TranslationLanguage; errorCode: string; message: string } & Now)

// ---- state ----------------------------------------------------------------------------------

export type TranslationStatus = 'pending' | 'running' | 'ready' | 'failed'

export interface TranslationState {
  language: TranslationLanguage
  status: TranslationStatus
  sourceLanguage: string | null
  /** Translations by segment sequence, with the hash of the text they translate. */
  segments: Readonly<Record<number, { text: string; sourceHash: string }>>
  /** Segments the last request asked for. */
  requested: number[]
  staleSegments: number[]
  engine: string | null
  model: string | null
  attempt: number
  errorCode: string | null
  message: string | null
  requestedAt: string
  startedAt: string | null
  completedAt: string | null
  updatedAt: string
}

export interface TranscriptNoteState {
  exists: true
  accountId: string
  phase: 'open' | 'ready' | 'failed'
  title: string
  provider: string | null
  sourceUrl: string | null
  language: string | null
  metadata: SourceMetadata | null
  transcript: Transcript | null
  speakers: Readonly<Record<string, SpeakerState>>
  translations: Readonly<Partial<Record<TranslationLanguage, TranslationState>>>
  /** The lines the last SegmentSpeakersChanged moved (what an undo gives back); null after a new transcription. */
  lastLineChanges: readonly LineSpeakerChange[] | null
}
export type NoteTranscriptState = { exists: false } | TranscriptNoteState

// ---- evolve ---------------------------------------------------------------------------------

const labelsOf = (segments: readonly TranscriptSegment[]) => [...new Set(segments.map((s) => s.speakerLabel).filter((l): l is string => !!l))].sort()

/** The segments with lines given to other speakers. */
export function withLineSpeakers<S extends Pick<TranscriptSegment, 'sequence' | 'speakerLabel'>>(segments: readonly S[], changes: readonly Pick<LineSpeakerChange, 'sequence' | 'to'>[]): S[] {
  const to = new Map(changes.map((c) => [c.sequence, c.to]))
  return segments.map((seg) => (to.has(seg.sequence) ? { ...seg, speakerLabel: to.get(seg.sequence)! } : seg))
}

/** The event recording `changes` (none when there are none), with the first speaker they leave. */
function speakersChanged(segments: readonly TranscriptSegment[], changes: LineSpeakerChange[], at: string): SegmentSpeakersChanged[] {
  if (changes.length === 0) return []
  return [{ type: 'SegmentSpeakersChanged', data: { changes, firstLabel: firstSpeakerLabel(withLineSpeakers(segments, changes)), at } }]
}

/** The event giving `lines` to `to`, or none when they are all `to`'s already. */
function linesGiven(segments: readonly TranscriptSegment[], lines: readonly TranscriptSegment[], to: string, at: string): SegmentSpeakersChanged[] {
  return speakersChanged(segments, lines.filter((l) => l.speakerLabel !== to).map((l) => ({ segmentId: l.id, sequence: l.sequence, startMs: l.startMs, endMs: l.endMs, from: l.speakerLabel, to })), at)
}

/** Applies the speaker events to a note's speakers; shared by the decider and the speakers projection. */
export function evolveSpeakers(speakers: Readonly<Record<string, SpeakerState>>, e: TranscriptEvent | NoteEvent): Record<string, SpeakerState> {
  const get = (label: string) => speakers[label] ?? emptySpeaker(label)
  switch (e.type) {
    case 'NoteTranscribed': {
      // Names stay with their labels across a new transcription; new labels start empty.
      // The names a published transcript gives are the source's, replaced by the next transcript's.
      const next: Record<string, SpeakerState> = {}
      const published = e.data.transcript.speakerNames ?? {}
      for (const label of labelsOf(e.data.transcript.segments)) next[label] = { ...get(label), published: published[label] ?? null }
      return next
    }
    case 'SpeakerRenamed':
      return { ...speakers, [e.data.label]: { ...get(e.data.label), confirmedName: e.data.name } }
    case 'SpeakerNamesSuggested': {
      const next = { ...speakers }
      for (const s of e.data.suggestions) {
        next[s.label] = { ...get(s.label), inferred: s.name !== null && s.confidence !== null ? { name: s.name, confidence: s.confidence, evidence: s.evidence } : null }
      }
      return next
    }
    case 'SpeakerVoiceExclusionChanged': {
      const s = get(e.data.label)
      return { ...speakers, [e.data.label]: { ...s, voiceExcluded: e.data.excluded, voice: e.data.excluded ? null : s.voice } }
    }
    case 'SpeakerVoiceMatched':
      return { ...speakers, [e.data.label]: { ...get(e.data.label), voice: e.data.match } }
    default:
      return speakers as Record<string, SpeakerState>
  }
}

/** Applies the translation events of one language; shared by the decider and the translations projection. */
export function evolveTranslation(t: TranslationState | undefined, e: TranscriptEvent): TranslationState | undefined {
  switch (e.type) {
    case 'TranslationRequested':
      return {
        language: e.data.language,
        status: 'pending',
        sourceLanguage: e.data.sourceLanguage,
        segments: t?.segments ?? {},
        requested: e.data.segments,
        staleSegments: t?.staleSegments ?? [],
        engine: t?.engine ?? null,
        model: t?.model ?? null,
        attempt: t?.attempt ?? 0,
        errorCode: null,
        message: null,
        requestedAt: e.data.at,
        startedAt: null,
        completedAt: t?.completedAt ?? null,
        updatedAt: e.data.at,
      }
    case 'TranslationStarted':
      return t && { ...t, status: 'running', engine: e.data.engine, model: e.data.model, attempt: e.data.attempt, startedAt: e.data.at, updatedAt: e.data.at }
    case 'TranslationSegmentsTranslated': {
      if (!t) return t
      const segments = { ...t.segments }
      for (const s of e.data.segments) segments[s.sequence] = { text: s.text, sourceHash: s.sourceHash }
      return { ...t, segments, updatedAt: e.data.at }
    }
    case 'TranslationCompleted':
      return t && { ...t, status: 'ready', staleSegments: e.data.staleSegments, completedAt: e.data.at, updatedAt: e.data.at }
    case 'TranslationFailed':
      return t && { ...t, status: 'failed', errorCode: e.data.errorCode, message: e.data.message, updatedAt: e.data.at }
    case 'TranscriptTextReplaced': {
      if (!t) return t
      const changed = e.data.changes.map((c) => c.sequence)
      const segments = { ...t.segments }
      for (const seq of changed) delete segments[seq]
      const stale = e.data.staleTranslations.find((s) => s.language === t.language)
      const staleSegments = stale ? [...new Set([...t.staleSegments, ...stale.segments])].sort((a, b) => a - b) : t.staleSegments
      return { ...t, segments, staleSegments, updatedAt: e.data.at }
    }
    default:
      return t
  }
}

/** A new transcription replaces every segment: ready translations become stale as a whole. */
export function translationAfterRetranscription(t: TranslationState, segments: readonly TranscriptSegment[], at: string): TranslationState {
  return {
    ...t,
    segments: {},
    staleSegments: t.status === 'ready' ? segments.map((s) => s.sequence) : [],
    updatedAt: at,
  }
}

function applyReplacement(transcript: Transcript, changes: readonly SegmentChange[]): Transcript {
  const by = new Map(changes.map((c) => [c.sequence, c]))
  return {
    ...transcript,
    segments: transcript.segments.map((s) => {
      const c = by.get(s.sequence)
      return c ? { ...s, text: c.after, words: c.words } : s
    }),
  }
}

export function evolveNoteTranscript(s: NoteTranscriptState, e: NoteEvent | TranscriptEvent | DomainEvent): NoteTranscriptState {
  const ev = e as NoteEvent | TranscriptEvent
  if (ev.type === 'NoteDeleted') return { exists: false }
  if (ev.type === 'NoteCreated') {
    const d = ev.data
    return {
      exists: true,
      accountId: d.accountId,
      phase: 'open',
      title: d.title,
      provider: d.provider,
      sourceUrl: d.sourceUrl,
      language: d.language,
      metadata: null,
      transcript: null,
      speakers: {},
      translations: {},
      lastLineChanges: null,
    }
  }
  if (!s.exists) return s
  switch (ev.type) {
    case 'NoteFinalized':
      return ev.data.title !== null ? { ...s, title: ev.data.title } : s
    case 'NoteEdited':
      return ev.data.title !== undefined ? { ...s, title: ev.data.title } : s
    case 'NoteTranscribed': {
      const transcript = ev.data.transcript
      const translations: Partial<Record<TranslationLanguage, TranslationState>> = {}
      for (const [lang, t] of Object.entries(s.translations)) translations[lang as TranslationLanguage] = translationAfterRetranscription(t!, transcript.segments, ev.data.at)
      return { ...s, transcript, speakers: evolveSpeakers(s.speakers, ev), translations, lastLineChanges: null }
    }
    case 'NoteReady':
      return { ...s, phase: 'ready', language: ev.data.language ?? s.language }
    case 'NoteFailed':
      return { ...s, phase: 'failed' }
    case 'NoteSourceMetadataRecorded':
      return { ...s, metadata: { ...s.metadata, ...ev.data.metadata } }
    case 'TranscriptTextReplaced': {
      const translations: Partial<Record<TranslationLanguage, TranslationState>> = {}
      for (const [lang, t] of Object.entries(s.translations)) translations[lang as TranslationLanguage] = evolveTranslation(t, ev)
      return { ...s, transcript: s.transcript && applyReplacement(s.transcript, ev.data.changes), translations }
    }
    case 'SegmentSpeakersChanged':
      return s.transcript ? { ...s, transcript: { ...s.transcript, segments: withLineSpeakers(s.transcript.segments, ev.data.changes) }, lastLineChanges: ev.data.changes } : s
    case 'SpeakerRenamed':
    case 'SpeakerNamesSuggested':
    case 'SpeakerVoiceExclusionChanged':
    case 'SpeakerVoiceMatched':
      return { ...s, speakers: evolveSpeakers(s.speakers, ev) }
    case 'TranslationRequested':
    case 'TranslationStarted':
    case 'TranslationSegmentsTranslated':
    case 'TranslationCompleted':
    case 'TranslationFailed':
      return { ...s, translations: { ...s.translations, [ev.data.language]: evolveTranslation(s.translations[ev.data.language], ev) } }
    default:
      // Events of the note's lifecycle that the transcript side does not need.
      return s
  }
}

// ---- decide ---------------------------------------------------------------------------------

function owned(s: NoteTranscriptState, accountId: string): TranscriptNoteState {
  if (!s.exists || s.accountId !== accountId) throw new DomainError('not_found', 'No note with that id belongs to you.')
  return s
}

function withTranscript(s: NoteTranscriptState, accountId: string): TranscriptNoteState & { transcript: Transcript } {
  if (!s.exists || s.accountId !== accountId || !s.transcript) throw new DomainError('no_transcript', 'This note has no transcript (yet).')
  return s as TranscriptNoteState & { transcript: Transcript }
}

/**
 * An edit of the caller's transcript: another account's note or none at all is the common
 * `not_found`; the caller's own note without a transcript yet is `no_transcript` (issue 17, item 5).
 */
function editableTranscript(s: NoteTranscriptState, accountId: string): TranscriptNoteState & { transcript: Transcript } {
  const note = owned(s, accountId)
  if (!note.transcript) throw new DomainError('no_transcript', 'This note has no transcript (yet).')
  return note as TranscriptNoteState & { transcript: Transcript }
}

function knownLabel(s: TranscriptNoteState & { transcript: Transcript }, label: string) {
  if (!s.transcript.segments.some((seg) => seg.speakerLabel === label)) {
    throw new DomainError('not_found', `This transcript has no speaker ${JSON.stringify(label)}.`)
  }
}

/** The audio's language as a bare code, from the transcript first, then the note. */
export function audioLanguage(s: TranscriptNoteState): string | null {
  return baseLanguage(s.transcript?.language) ?? baseLanguage(s.transcript?.languagesDetected[0]) ?? baseLanguage(s.language)
}

/** Segments lacking a translation of their current text. */
export function missingSegments(transcript: Transcript, t: Pick<TranslationState, 'segments'> | undefined): number[] {
  return transcript.segments.filter((seg) => t?.segments[seg.sequence]?.sourceHash !== sourceHash(seg.text)).map((seg) => seg.sequence)
}

export function decideNoteTranscript(c: TranscriptCommand, s: NoteTranscriptState): TranscriptEvent[] {
  switch (c.type) {
    case 'ReplaceInTranscript': {
      const note = editableTranscript(s, c.accountId)
      if (c.find.length === 0) throw new DomainError('invalid_request', '`find` must not be empty.')
      // A find-and-replace must not tell what the caller cannot read (how often a word occurs past the preview).
      const segments = note.transcript.segments
      const visible = shownWhole(segments, c.preview)
      const changes = planReplacement(visible, c)
      if (changes.length === 0) return []
      const changed = changes.map((ch) => ch.sequence)
      const staleTranslations = Object.values(note.translations)
        .filter((t) => t!.status === 'ready' && changed.some((seq) => t!.segments[seq]))
        .map((t) => ({ language: t!.language, segments: changed.filter((seq) => t!.segments[seq]) }))
      return [
        {
          type: 'TranscriptTextReplaced',
          data: {
            find: c.find,
            replace: c.replace,
            caseSensitive: c.caseSensitive,
            wholeWord: c.wholeWord,
            occurrences: changes.reduce((n, ch) => n + ch.occurrences, 0),
            changes,
            staleTranslations,
            at: c.now,
          },
        },
      ]
    }
    case 'ChangeSegmentSpeaker': {
      const note = editableTranscript(s, c.accountId)
      const segments = note.transcript.segments
      // On a plan with a preview, a line it does not show whole is no line the caller can move.
      const visible = shownWhole(segments, c.preview)
      const line = visible.find((seg) => seg.sequence === c.sequence)
      if (!line) throw new DomainError('not_found', `This transcript has no line ${c.sequence}.`)
      const labels = labelsOf(segments)
      // A new speaker's letter is one no line has and no speaker had: a label whose lines all
      // moved away keeps its name, which must not come back on someone else.
      const to = c.to ?? nextSpeakerLabel(new Set([...labels, ...Object.keys(note.speakers)]))
      if (c.to !== null && !labels.includes(c.to)) {
        throw new DomainError('invalid_request', `A line goes to one of this transcript's speakers (${labels.join(', ') || 'none yet'}) or to a new speaker (\`newSpeaker\`).`)
      }
      return linesGiven(segments, [line], to, c.now)
    }
    case 'MergeSpeaker': {
      // Every line, past a free plan's preview too: a merge quotes no line and tells nothing the
      // speakers' talk time does not.
      const note = editableTranscript(s, c.accountId)
      knownLabel(note, c.from)
      const labels = labelsOf(note.transcript.segments).filter((l) => l !== c.from)
      if (!labels.includes(c.into)) throw new DomainError('invalid_request', `Speaker ${c.from} is merged into another of this transcript's speakers (${labels.join(', ') || 'there is none'}).`)
      const segments = note.transcript.segments
      return linesGiven(segments, segments.filter((seg) => seg.speakerLabel === c.from), c.into, c.now)
    }
    case 'UndoLineSpeakers': {
      const note = editableTranscript(s, c.accountId)
      const segments = note.transcript.segments
      const now = new Map(segments.map((seg) => [seg.sequence, seg]))
      // Lines moved again since, and lines that had no speaker before, stay as they are.
      const back = (note.lastLineChanges ?? []).filter((x) => x.from !== null && now.get(x.sequence)?.speakerLabel === x.to)
      if (back.length === 0) throw new DomainError('conflict', 'There is no change of who said which line to undo.')
      return speakersChanged(segments, back.map((x) => ({ ...x, from: x.to, to: x.from! })), c.now)
    }
    case 'RecordSourceMetadata': {
      if (!s.exists) throw new DomainError('not_found', 'No such note.')
      const merged = { ...s.metadata, ...c.metadata }
      if (JSON.stringify(merged) === JSON.stringify(s.metadata)) return []
      return [{ type: 'NoteSourceMetadataRecorded', data: { metadata: c.metadata, at: c.now } }]
    }
    case 'RenameSpeaker': {
      const note = editableTranscript(s, c.accountId)
      knownLabel(note, c.label)
      const name = c.name.trim()
      if (name.length < 1 || name.length > 120) throw new DomainError('invalid_request', 'A speaker name has 1 to 120 characters.')
      const previous = note.speakers[c.label]?.confirmedName ?? null
      if (previous === name) return []
      return [{ type: 'SpeakerRenamed', data: { label: c.label, name, previousName: previous, sourceKey: c.sourceKey, at: c.now } }]
    }
    case 'RecordNameSuggestions': {
      const note = owned(s, c.accountId)
      if (note.phase !== 'ready' || !note.transcript) throw new DomainError('note_not_ready', 'Speaker names can be suggested once the note is ready.')
      const labels = new Set(labelsOf(note.transcript.segments))
      const suggestions = c.suggestions
        .filter((x) => labels.has(x.label))
        .map((x) => ({
          ...x,
          // Only an unconfirmed speaker takes an inferred name, and only above the threshold.
          applied: !note.speakers[x.label]?.confirmedName && x.name !== null && (x.confidence ?? 0) >= NAME_CONFIDENCE_THRESHOLD,
        }))
      return [{ type: 'SpeakerNamesSuggested', data: { engine: c.engine, model: c.model, threshold: NAME_CONFIDENCE_THRESHOLD, suggestions, at: c.now } }]
    }
    case 'SetSpeakerVoiceExclusion': {
      const note = editableTranscript(s, c.accountId)
      knownLabel(note, c.label)
      if ((note.speakers[c.label]?.voiceExcluded ?? false) === c.excluded) return []
      return [{ type: 'SpeakerVoiceExclusionChanged', data: { label: c.label, excluded: c.excluded, at: c.now } }]
    }
    case 'RecordVoiceMatch': {
      if (!s.exists || !s.transcript) return []
      const speaker = s.speakers[c.label]
      // 'Do not recognise this person': an excluded voice is never matched.
      if (speaker?.voiceExcluded) return []
      if (JSON.stringify(speaker?.voice ?? null) === JSON.stringify(c.match)) return []
      return [{ type: 'SpeakerVoiceMatched', data: { label: c.label, match: c.match, at: c.now } }]
    }
    case 'ExcludeProfileVoice': {
      if (!s.exists || !s.transcript) return []
      const labels = new Set(labelsOf(s.transcript.segments))
      return [...labels]
        .filter((label) => {
          const speaker = s.speakers[label]
          if (speaker?.voiceExcluded) return false
          return speaker?.voice?.profileId === c.profileId || c.enrolledLabels.includes(label)
        })
        .map((label) => ({ type: 'SpeakerVoiceExclusionChanged' as const, data: { label, excluded: true, profileId: c.profileId, at: c.now } }))
    }
    case 'RequestTranslation': {
      const note = withTranscript(s, c.accountId)
      const source = audioLanguage(note)
      if (source === c.language) throw new DomainError('same_language', `The audio is already in ${c.language}.`)
      const t = note.translations[c.language]
      if (t && (t.status === 'pending' || t.status === 'running')) return []
      const missing = missingSegments(note.transcript, t)
      if (t && t.status === 'ready' && missing.length === 0) return []
      const unsupported = unsupportedPair(c.capability, source, c.language)
      if (unsupported) throw new DomainError('translation_pair_unsupported', unsupported, { engine: c.capability.engine, supportedPairs: c.capability.pairs })
      return [{ type: 'TranslationRequested', data: { language: c.language, sourceLanguage: source, segments: missing, totalSegments: note.transcript.segments.length, requestId: c.requestId, at: c.now } }]
    }
    case 'StartTranslation': {
      if (!s.exists) throw new DomainError('not_found', 'No such note.')
      const t = s.translations[c.language]
      // A worker that died mid-run leaves `running` behind; another takes it over after the lease.
      const abandoned = t?.status === 'running' && t.startedAt !== null && Date.parse(c.now) - Date.parse(t.startedAt) >= c.leaseMs
      if (!t || (t.status !== 'pending' && !abandoned)) throw new DomainError('conflict', `The ${c.language} translation is not waiting to be translated.`)
      return [{ type: 'TranslationStarted', data: { language: c.language, engine: c.engine, model: c.model, attempt: t.attempt + 1, at: c.now } }]
    }
    case 'RecordTranslatedSegments': {
      if (!s.exists || !s.transcript) return []
      const t = s.translations[c.language]
      if (!t || t.status !== 'running') return []
      const current = new Map(s.transcript.segments.map((seg) => [seg.sequence, sourceHash(seg.text)]))
      // A segment edited while it was being translated keeps no translation of its old text.
      const fresh = c.segments.filter((x) => current.get(x.sequence) === x.sourceHash)
      if (fresh.length === 0) return []
      return [{ type: 'TranslationSegmentsTranslated', data: { language: c.language, segments: fresh, at: c.now } }]
    }
    case 'CompleteTranslation': {
      if (!s.exists || !s.transcript) return []
      const t = s.translations[c.language]
      if (!t || t.status !== 'running') return []
      return [{ type: 'TranslationCompleted', data: { language: c.language, staleSegments: missingSegments(s.transcript, t), at: c.now } }]
    }
    case 'FailTranslation': {
      if (!s.exists) return []
      const t = s.translations[c.language]
      if (!t || (t.status !== 'running' && t.status !== 'pending')) return []
      return [{ type: 'TranslationFailed', data: { language: c.language, errorCode: c.errorCode, message: c.message.slice(0, 1000), at: c.now } }]
    }
  }
}

export const noteTranscriptDecider: Decider<TranscriptCommand, TranscriptEvent, NoteTranscriptState> = {
  decide: decideNoteTranscript,
  evolve: evolveNoteTranscript as (s: NoteTranscriptState, e: TranscriptEvent) => NoteTranscriptState,
  initialState: () => ({ exists: false }),
}
