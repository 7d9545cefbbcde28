// What the commands read from the read side, as ports: a command checks and decides with these
// and never opens a collection. The read side implements them (readmodels/queries.ts) and
// app/services.ts hands each command the ones it needs. The types a query and its caller share
// (export options, retrieval hits) are declared here, where both may import them.
import type { SourceTranscript, Passage, AnalysisDraft } from '../domain/language/content.ts'
import type { TranslationLanguage } from '../domain/languages.ts'
import type { ContentLimit } from '../domain/transcripts/preview.ts'
import type { RosterPerson } from '../domain/speakers/inference.ts'
import type { DeliverableFile } from '../domain/deliverables/deliverable.ts'
import type { TranscriptFormat, TranslationMode } from '../domain/transcripts/formats.ts'
import type { AnalysisList, Outline } from '../contract/analysis.ts'
import type { Deliverable } from '../contract/deliverables.ts'
import type { SpeakerList, Transcript, TranslationState, VoiceProfiles } from '../contract/transcripts.ts'
import type { WebhookDelivery, WebhookEndpoint } from '../contract/webhooks.ts'

// ---- notes --------------------------------------------------------------------------------------

/** A ready note as the language engines read it. */
export interface ReadyNote {
  note: { title: string; recordedAt: string | null; createdAt: string }
  source: SourceTranscript
}

export interface NoteReads {
  /** The caller's note, ready and transcribed (404 not_found, 409 note_not_ready otherwise). */
  ready(accountId: string, noteId: string): Promise<ReadyNote>
  /** Ids of the caller's notes filed in a folder. */
  idsInFolder(accountId: string, folderId: string): Promise<string[]>
}

// ---- analyses, retrieval, deliverables ---------------------------------------------------------

/** A persisted analysis as the engines read it, with the speaker names it was made with (labels without a name left out). */
export interface PersistedDraft {
  draft: AnalysisDraft
  speakerNames: Record<string, string>
  attribution: string | null
}

export interface AnalysisReads {
  /** The latest analysis per template (404 not_found when the note is not the caller's). */
  list(accountId: string, noteId: string): Promise<AnalysisList>
  outline(accountId: string, noteId: string): Promise<Outline>
  /** The persisted latest analysis of one template, as the engines read it; null if never generated. */
  latestDraft(accountId: string, noteId: string, template: string): Promise<PersistedDraft | null>
}

export interface SegmentHit {
  noteId: string
  segmentId: string
  score: number
}

export interface SegmentSearch {
  accountId: string
  /** Only this note; otherwise every note of the account. */
  noteId?: string
  /** Query terms and their weights (1 for the question, less for earlier turns). */
  weights: ReadonlyMap<string, number>
  limit: number
}

/** A retrieved segment before the answer labels it for quoting. */
export type SegmentText = Omit<Passage, 'label'>

export interface SegmentReads {
  search(q: SegmentSearch): Promise<SegmentHit[]>
  /** The segments behind the hits, with their note's title; notes not ready (or not the caller's) are left out. */
  /** `limit`: the caller's plan's preview; a segment past it is left out, a cut one comes cut. */
  texts(accountId: string, hits: readonly SegmentHit[], limit?: ContentLimit): Promise<SegmentText[]>
}

export interface DeliverableReads {
  get(accountId: string, deliverableId: string): Promise<Deliverable | null>
  list(accountId: string, noteId: string): Promise<{ items: Deliverable[] }>
  /** The stored file of one (404 not_found when it is not this note's of the caller's). */
  file(accountId: string, noteId: string, deliverableId: string): Promise<DeliverableFile>
}

// ---- transcripts ----------------------------------------------------------------------------------

/** Cuts content for callers whose plan gets a preview only (the free plan: domain/transcripts/preview.ts). */
export type { ContentLimit }

export interface TranscriptReadOptions {
  translation?: TranslationLanguage
  /** The caller's plan's preview (transcriptPreviewFor); undefined shows everything. */
  limit: ContentLimit | undefined
}

export interface ExportOptions extends TranscriptReadOptions {
  format: TranscriptFormat
  translationMode?: TranslationMode
}

export interface ExportedTranscript {
  contentType: string
  body: Transcript | string
  /** `none` when no translation was asked for. */
  translationStatus: TranslationState['status'] | 'stale' | 'not_requested'
}

export interface TranscriptReads {
  /** Resolves when the caller's note has a transcript, and the translation when one is named (404 no_transcript otherwise). */
  require(accountId: string, noteId: string, translation?: TranslationLanguage): Promise<unknown>
  export(accountId: string, noteId: string, options: ExportOptions): Promise<ExportedTranscript>
  translation(accountId: string, noteId: string, language: TranslationLanguage, limit: ContentLimit | undefined): Promise<TranslationState>
  speakers(accountId: string, noteId: string, limit?: ContentLimit): Promise<SpeakerList>
  /** Earlier confirmations on the same source, by person (the note's own are left out). */
  roster(accountId: string, sourceKey: string | null, exceptNoteId: string): Promise<RosterPerson[]>
}

export interface VoiceReads {
  profiles(accountId: string, matching: { available: boolean; reason: string | null }): Promise<VoiceProfiles>
  /** The caller's notes with a speaker whose voice was matched to this profile. */
  notesMatchedTo(accountId: string, profileId: string): Promise<string[]>
}

// ---- webhooks -------------------------------------------------------------------------------------

export interface WebhookReads {
  /** The account's endpoints not deleted, oldest first. */
  endpoints(accountId: string): Promise<WebhookEndpoint[]>
  /** The last 100 deliveries to an endpoint, newest first; null when it is not the caller's or was deleted. */
  deliveries(accountId: string, endpointId: string): Promise<WebhookDelivery[] | null>
}
