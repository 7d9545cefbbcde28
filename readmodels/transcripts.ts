// Queries over the transcript read models: the transcript in every format (with speaker names
// resolved and a translation merged in), speakers, the speaker timeline, translation states and
// voice profiles. Free of charge: the REST route charges for transcript reads. Every caller passes
// the `limit` of its plan (domain/transcripts/preview.ts), which cuts the text on the free plan.
import { DomainError } from '../domain/errors.ts'
import { fullTextOf } from '../domain/notes/transcript.ts'
import { renderText, CONTENT_TYPES, type ExportSegment, type TranscriptFormat, type TranslationMode } from '../domain/transcripts/formats.ts'
import { sourceHash } from '../domain/notes/noteTranscript.ts'
import { consentStatusOf, CURRENT_CONSENT_VERSION } from '../domain/voice/voiceProfiles.ts'
import { speakerViewsOf, type SpeakerViewWithStats } from './speakerNames.ts'
import { baseLanguage, type TranslationLanguage } from '../domain/languages.ts'
import type { RosterPerson } from '../domain/speakers/inference.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { NOTES, TRANSCRIPTS, type NoteDoc, type TranscriptDoc } from '../projections/notes.ts'
import { ROSTER_ENTRIES, SPEAKERS, type RosterEntryDoc, type SpeakersDoc } from '../projections/speakers.ts'
import { turnsOf } from '../domain/speakers/turns.ts'
import { TRANSLATIONS, translationId, type TranslationDoc } from '../projections/translations.ts'
import { VOICE_CONSENTS, VOICE_PROFILES, type VoiceConsentDoc, type VoiceProfileDoc } from '../projections/voiceProfiles.ts'
import type { ExportOptions, ExportedTranscript, TranscriptReadOptions } from '../commands/reads.ts'
import { cut, shownWhole, type ContentLimit } from '../domain/transcripts/preview.ts'
import type { Speaker, SpeakerList, SpeakerTimeline, Transcript, TranslationState, VoiceProfiles } from '../contract/transcripts.ts'

export async function findTranscript(docs: DocumentStore, accountId: string, noteId: string): Promise<TranscriptDoc> {
  const t = await docs.collection<TranscriptDoc>(TRANSCRIPTS).findOne({ _id: noteId, accountId })
  if (!t) throw new DomainError('no_transcript', 'This note has no transcript (yet), or no note with that id belongs to you.')
  return t
}

async function speakerViews(docs: DocumentStore, accountId: string, noteId: string): Promise<Map<string, SpeakerViewWithStats>> {
  return (await speakerViewsOf(docs, accountId, [noteId])).get(noteId) ?? new Map()
}

const nameOf = (views: Map<string, SpeakerViewWithStats>, label: string | null): string | null => (label ? (views.get(label)?.name ?? null) : null)

const toSpeaker = (v: SpeakerViewWithStats): Speaker => ({
  label: v.label,
  name: v.name,
  nameStatus: v.nameStatus,
  suggestedName: v.suggestedName,
  suggestedNameConfidence: v.suggestedNameConfidence,
  speechSeconds: v.speechSeconds,
  segmentCount: v.segmentCount,
  voiceExcluded: v.voiceExcluded,
  ...(v.diarizationConfidence !== null ? { diarizationConfidence: v.diarizationConfidence } : {}),
})

/** `limit`: the caller's plan's preview; evidence quoting a segment past it is left out. */
export async function getSpeakers(docs: DocumentStore, accountId: string, noteId: string, limit?: ContentLimit): Promise<SpeakerList> {
  const note = await docs.collection<NoteDoc>(NOTES).findOne({ _id: noteId, accountId }, { projection: { _id: 1 } })
  if (!note) throw new DomainError('not_found', 'No note with that id belongs to you.')
  const views = await speakerViews(docs, accountId, noteId)
  let readable = (_: number | null) => true
  if (limit) {
    const t = await docs.collection<TranscriptDoc>(TRANSCRIPTS).findOne({ _id: noteId, accountId }, { projection: { segments: 1 } })
    const segments = t?.segments ?? []
    const whole = new Set(shownWhole(segments, limit).map((x) => x.sequence))
    readable = (segment) => segment === null || whole.has(segment)
  }
  return { noteId, speakers: [...views.values()].map((v) => ({ ...toSpeaker(v), evidence: v.evidence.filter((e) => readable(e.segment)) })) }
}

export async function getSpeakerTimeline(docs: DocumentStore, accountId: string, noteId: string): Promise<SpeakerTimeline> {
  const transcript = await findTranscript(docs, accountId, noteId)
  // Turns come from the lines as they are now, so a line moved to another speaker moves its turn too.
  const views = await speakerViews(docs, accountId, noteId)
  const lastEnd = transcript.segments.reduce((m, s) => Math.max(m, s.endMs), 0)
  return {
    noteId,
    durationMs: transcript.durationSeconds !== null ? Math.round(transcript.durationSeconds * 1000) : transcript.segments.length ? lastEnd : null,
    speakers: [...views.values()].map(toSpeaker),
    turns: turnsOf(transcript.segments).map((t) => ({
      speakerLabel: t.label,
      speakerName: nameOf(views, t.label),
      startMs: t.startMs,
      endMs: t.endMs,
      firstSegment: t.firstSegment,
      lastSegment: t.lastSegment,
      segmentCount: t.segmentCount,
    })),
  }
}

/** Earlier confirmations on the same source, by person (the note's own are left out). */
export async function rosterFor(docs: DocumentStore, accountId: string, sourceKey: string | null, exceptNoteId: string): Promise<RosterPerson[]> {
  if (!sourceKey) return []
  const entries = await docs.collection<RosterEntryDoc>(ROSTER_ENTRIES).find({ accountId, sourceKey }, { sort: { at: 1 } })
  const people = new Map<string, RosterPerson & { notesSeen: Set<string>; firstSeen: Set<string> }>()
  for (const e of entries) {
    if (e.noteId === exceptNoteId) continue
    const key = e.name.toLocaleLowerCase()
    const p = people.get(key) ?? { name: e.name, notes: 0, firstSpeakerNotes: 0, notesSeen: new Set(), firstSeen: new Set() }
    p.name = e.name
    p.notesSeen.add(e.noteId)
    if (e.wasFirstSpeaker) p.firstSeen.add(e.noteId)
    people.set(key, p)
  }
  return [...people.values()].map((p) => ({ name: p.name, notes: p.notesSeen.size, firstSpeakerNotes: p.firstSeen.size }))
}

// ---- transcript -------------------------------------------------------------------------------

async function translationDoc(docs: DocumentStore, noteId: string, language: TranslationLanguage | undefined): Promise<TranslationDoc | null> {
  if (!language) return null
  return docs.collection<TranslationDoc>(TRANSLATIONS).findOne({ _id: translationId(noteId, language) })
}

/**
 * A transcript asked for with `translation` needs that translation to have been requested: a
 * strict client that asked for Spanish must not get the original text back as if it were (404
 * `no_transcript`, "no transcript yet": this translated one does not exist). Once requested it is
 * served whatever its status, which the answer states (segments not translated yet have none).
 */
function requireTranslation(t: TranscriptDoc, tr: TranslationDoc | null, language: TranslationLanguage | undefined): void {
  if (!language || tr) return
  const noteId = t._id
  if (baseLanguage(t.language) === language) throw new DomainError('no_transcript', `The transcript is already in ${language}: ask for it without \`translation\`.`)
  throw new DomainError('no_transcript', `This note has no ${language} translation: request one with POST /v1/notes/${noteId}/transcript/translation, then ask again.`)
}

/** The caller's transcript, and its translation when one is asked for (404 `no_transcript` when either is missing). */
export async function requireTranscript(docs: DocumentStore, accountId: string, noteId: string, translation?: TranslationLanguage): Promise<TranscriptDoc> {
  const [t, tr] = await Promise.all([findTranscript(docs, accountId, noteId), translationDoc(docs, noteId, translation)])
  requireTranslation(t, tr, translation)
  return t
}

/** The translated text of each segment whose current text it translates. */
function translatedBySequence(t: TranslationDoc | null, segments: TranscriptDoc['segments']): Map<number, string> {
  const out = new Map<number, string>()
  if (!t) return out
  const hashes = new Map(segments.map((s) => [s.sequence, sourceHash(s.text)]))
  for (const s of t.segments) if (hashes.get(s.sequence) === s.sourceHash) out.set(s.sequence, s.text)
  return out
}

export async function getTranscript(docs: DocumentStore, accountId: string, noteId: string, options: TranscriptReadOptions): Promise<Transcript> {
  const t = await findTranscript(docs, accountId, noteId)
  const [views, tr] = await Promise.all([speakerViews(docs, accountId, noteId), translationDoc(docs, noteId, options.translation)])
  requireTranslation(t, tr, options.translation)
  const translated = translatedBySequence(tr, t.segments)
  const ordered = [...t.segments].sort((a, b) => a.sequence - b.sequence)
  const { shown, truncated, counts } = cut(ordered, options.limit)
  return {
    noteId,
    language: t.language,
    languagesDetected: t.languagesDetected,
    durationSeconds: t.durationSeconds === null ? null : Math.round(t.durationSeconds),
    provider: t.provider,
    model: t.model,
    fullText: truncated ? fullTextOf(shown) : t.fullText,
    speakers: [...views.values()].map(toSpeaker),
    segments: shown.map((s) => ({
      id: s.id,
      sequence: s.sequence,
      startMs: s.startMs,
      endMs: s.endMs,
      speakerLabel: s.speakerLabel,
      speakerName: nameOf(views, s.speakerLabel),
      text: s.text,
      confidence: s.confidence,
      locale: s.locale,
      words: s.words,
      // The spec types it as a string: a segment not translated (yet) has no field, never null,
      // as the text formats show it with its original text alone (issue 17, item 5).
      ...(options.translation && translated.has(s.sequence) ? { translation: translated.get(s.sequence)! } : {}),
    })),
    ...(options.translation ? { translation: { language: options.translation, status: tr?.status ?? 'none', stale: (tr?.staleSegments.length ?? 0) > 0 } } : {}),
    ...(truncated ? { truncated: true, truncation: counts } : {}),
  }
}

/** The transcript in the asked format; text formats are rendered from the same JSON view. */
export async function exportTranscript(docs: DocumentStore, accountId: string, noteId: string, options: ExportOptions): Promise<ExportedTranscript> {
  const json = await getTranscript(docs, accountId, noteId, options)
  const translationStatus = !options.translation ? 'not_requested' : json.translation!.stale ? 'stale' : json.translation!.status
  if (options.format === 'json') return { contentType: CONTENT_TYPES.json, body: json, translationStatus }
  const title = (await docs.collection<NoteDoc>(NOTES).findOne({ _id: noteId, accountId }, { projection: { title: 1 } }))?.title ?? ''
  const segments: ExportSegment[] = json.segments.map((s) => ({ ...s, translation: s.translation }))
  const body = renderText(options.format, { title, segments, translation: options.translation ? { language: options.translation, mode: options.translationMode ?? 'both' } : null })
  return { contentType: `${CONTENT_TYPES[options.format]}; charset=utf-8`, body, translationStatus }
}

// ---- translation ------------------------------------------------------------------------------

export async function getTranslation(docs: DocumentStore, accountId: string, noteId: string, language: TranslationLanguage, limit: ContentLimit | undefined): Promise<TranslationState> {
  const t = await findTranscript(docs, accountId, noteId)
  const [d, views] = await Promise.all([translationDoc(docs, noteId, language), speakerViews(docs, accountId, noteId)])
  const translated = translatedBySequence(d, t.segments)
  const ordered = [...t.segments].sort((a, b) => a.sequence - b.sequence)
  const total = ordered.length
  const done = ordered.filter((s) => translated.has(s.sequence)).length
  const rows = d
    ? ordered.map((s) => ({ sequence: s.sequence, startMs: s.startMs, endMs: s.endMs, speakerLabel: s.speakerLabel, speakerName: nameOf(views, s.speakerLabel), text: translated.get(s.sequence) ?? null }))
    : []
  const { shown, truncated, counts } = cut(rows.map((r) => ({ ...r, text: r.text ?? '' })), limit)
  return {
    noteId,
    language,
    sourceLanguage: d?.sourceLanguage ?? null,
    status: d?.status ?? 'none',
    stale: (d?.staleSegments.length ?? 0) > 0,
    staleSegments: d?.staleSegments ?? [],
    progress: { translatedSegments: d ? done : 0, totalSegments: total, percent: d && total > 0 ? Math.round((done / total) * 1000) / 10 : 0 },
    engine: d?.engine ?? null,
    model: d?.model ?? null,
    errorCode: d?.errorCode ?? null,
    message: d?.message ?? null,
    requestedAt: d?.requestedAt ?? null,
    completedAt: d?.completedAt ?? null,
    updatedAt: d?.updatedAt ?? null,
    segments: shown.map((r, i) => ({ ...r, text: rows[i]!.text === null ? null : r.text })),
    ...(truncated ? { truncated: true, truncation: counts } : {}),
  }
}

// ---- voice profiles ---------------------------------------------------------------------------

/**
 * Notes of the account with a speaker matched to the profile. The label is a key of `speakers`,
 * so the match is found in the documents rather than by the query (no index would serve it).
 */
export async function notesMatchedTo(docs: DocumentStore, accountId: string, profileId: string): Promise<string[]> {
  const notes = await docs.collection<SpeakersDoc>(SPEAKERS).find({ accountId }, { projection: { speakers: 1 } })
  return notes.filter((d) => Object.values(d.speakers ?? {}).some((sp) => sp.voice?.profileId === profileId)).map((d) => d._id)
}

export async function getVoiceProfiles(docs: DocumentStore, accountId: string, matching: { available: boolean; reason: string | null }): Promise<VoiceProfiles> {
  const [c, profiles] = await Promise.all([
    docs.collection<VoiceConsentDoc>(VOICE_CONSENTS).findOne({ _id: accountId }),
    docs.collection<VoiceProfileDoc>(VOICE_PROFILES).find({ accountId }, { sort: { name: 1 } }),
  ])
  const status = c ? consentStatusOf(c, CURRENT_CONSENT_VERSION) : 'never'
  const reasons = [
    status !== 'granted' ? `biometric consent is ${status}${status === 'outdated' ? ' (accept the current consent text in the app or on the web)' : ''}` : null,
    matching.available ? null : matching.reason,
  ].filter((r): r is string => !!r)
  return {
    consent: { status, grantedAt: c?.grantedAt ?? null, revokedAt: c?.revokedAt ?? null },
    profiles: profiles.map((p) => ({
      id: p._id,
      name: p.name,
      confirmedAppearances: p.appearances.length,
      voiceSeconds: p.voiceSeconds,
      hasVoiceprint: p.hasVoiceprint,
      voiceExcluded: p.voiceExcluded,
    })),
    voiceMatching: { available: reasons.length === 0, reason: reasons.length ? reasons.join('; ') : null },
  }
}
