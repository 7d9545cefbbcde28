// Transcript commands and charged reads: the export read (1 credit), replace-in-transcript,
// translation requests, speaker renames, name suggestions and voice exclusion. REST routes
// and MCP tools call these; the rules live in domain/notes/noteTranscript.ts.
import { cut, transcriptPreviewFor } from '../domain/transcripts/preview.ts'
import { DomainError } from '../domain/errors.ts'
import { PRICES } from '../domain/credits/prices.ts'
import { noteStream } from '../domain/notes/note.ts'
import { noteTranscriptDecider, type TranscriptCommand, type TranscriptNoteState } from '../domain/notes/noteTranscript.ts'
import { sourceKeyOf, type SourceMetadata } from '../domain/speakers/sourceKey.ts'
import type { TranslationLanguage } from '../domain/languages.ts'
import type { TranslationCapability } from '../domain/transcripts/translationPairs.ts'
import type { SpeakerNamer } from '../ports/speakerNamer.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import type { ReplaceInTranscriptRequest, ReplaceInTranscriptResponse, SpeakerList, Transcript, TranslationState } from '../contract/transcripts.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { CreditCommands } from './credits.ts'
import type { Caller } from './context.ts'
import type { ExportOptions, ExportedTranscript, TranscriptReads } from './reads.ts'

type Without<C, K extends string> = C extends unknown ? Omit<C, K> : never

export interface TranscriptCommandsDeps {
  handler: CommandHandler
  credits: CreditCommands
  reads: TranscriptReads
  sync: ReadModelSync
  namer: SpeakerNamer
  /** Tells the translation worker that work was queued (it also polls). */
  wakeTranslations?: () => void
  /** What the installed translation engine can translate (asked once, when first needed). */
  translationCapability: () => Promise<TranslationCapability>
  clock?: () => Date
}

export class TranscriptCommands {
  private readonly clock: () => Date
  constructor(private readonly deps: TranscriptCommandsDeps) {
    this.clock = deps.clock ?? (() => new Date())
  }

  private async run(caller: Caller | null, noteId: string, command: Without<TranscriptCommand, 'now'>, projections: string[]) {
    const result = await this.deps.handler.handle(noteStream.of(noteId), { ...command, now: this.clock().toISOString() } as TranscriptCommand, noteTranscriptDecider, {
      metadata: caller ? { requestId: caller.requestId, accountId: caller.accountId } : { actor: 'system' },
    })
    for (const p of projections) await this.deps.sync.waitFor(p, result.position)
    return result
  }

  private async load(noteId: string) {
    return (await this.deps.handler.load(noteStream.of(noteId), noteTranscriptDecider)).state
  }

  /**
   * GET /v1/notes/{id}/transcript: 1 credit per read, charged in the ledger after the note and its
   * transcript are found (a 404 costs nothing) and refunded by an event if rendering then fails.
   */
  async readTranscript(caller: Caller, noteId: string, options: Omit<ExportOptions, 'limit'>): Promise<ExportedTranscript> {
    await this.deps.reads.require(caller.accountId, noteId, options.translation)
    const price = PRICES.transcriptRead
    return this.deps.credits.chargedOperation(caller.accountId, { operation: price.operation, cost: price.credits, noteId, requestId: caller.requestId }, () =>
      this.deps.reads.export(caller.accountId, noteId, { ...options, limit: transcriptPreviewFor(caller.plan) }),
    )
  }

  /** Find/replace over segment texts (REST extension, MCP replace_in_transcript). */
  async replace(caller: Caller, noteId: string, req: ReplaceInTranscriptRequest): Promise<ReplaceInTranscriptResponse> {
    const preview = transcriptPreviewFor(caller.plan)
    const r = await this.run(caller, noteId, { type: 'ReplaceInTranscript', accountId: caller.accountId, ...req, ...(preview ? { preview } : {}) }, ['notes', 'speakers', 'translations'])
    // `truncated` says the edit covered the preview only; it depends on the transcript, never on what `find` matched.
    const beyond = preview && r.state.exists && r.state.transcript ? cut(r.state.transcript.segments, preview).truncated : false
    const e = r.events[0]
    if (!e || e.type !== 'TranscriptTextReplaced') return { noteId, occurrences: 0, changedSegments: [], staleTranslations: [], ...(beyond ? { truncated: true } : {}) }
    const changed = e.data.changes.map((c) => ({ sequence: c.sequence, before: c.before, after: c.after }))
    return {
      noteId,
      occurrences: e.data.occurrences,
      changedSegments: await this.withinPreview(caller, noteId, changed),
      staleTranslations: e.data.staleTranslations as ReplaceInTranscriptResponse['staleTranslations'],
      ...(beyond ? { truncated: true } : {}),
    }
  }

  /**
   * A person gives one line to another speaker, or to a new one (`to` null). Talk
   * time, turns, exports and every output made afterwards follow; the line's id, words and times
   * stay as they were.
   */
  async changeSegmentSpeaker(caller: Caller, noteId: string, sequence: number, to: string | null): Promise<SpeakerList> {
    const preview = transcriptPreviewFor(caller.plan)
    await this.run(caller, noteId, { type: 'ChangeSegmentSpeaker', accountId: caller.accountId, sequence, to, ...(preview ? { preview } : {}) }, ['notes', 'speakers'])
    return this.deps.reads.speakers(caller.accountId, noteId, preview)
  }

  /** Every line of speaker `from` to `into`: one person the diarizer heard as two. */
  async mergeSpeaker(caller: Caller, noteId: string, from: string, into: string): Promise<SpeakerList> {
    await this.run(caller, noteId, { type: 'MergeSpeaker', accountId: caller.accountId, from, into }, ['notes', 'speakers'])
    return this.deps.reads.speakers(caller.accountId, noteId, transcriptPreviewFor(caller.plan))
  }

  /** The last move or merge given back; undoing an undo redoes it (409 conflict: nothing to undo). */
  async undoLineSpeakers(caller: Caller, noteId: string): Promise<SpeakerList> {
    await this.run(caller, noteId, { type: 'UndoLineSpeakers', accountId: caller.accountId }, ['notes', 'speakers'])
    return this.deps.reads.speakers(caller.accountId, noteId, transcriptPreviewFor(caller.plan))
  }

  /**
   * The echo of an edit shows segment text too: on a plan with a preview only the changed
   * segments inside the preview (of the transcript after the edit) come back, cut like it, or a
   * find-and-replace of a common letter would read out the whole transcript.
   */
  private async withinPreview(caller: Caller, noteId: string, changed: ReplaceInTranscriptResponse['changedSegments']) {
    const limit = transcriptPreviewFor(caller.plan)
    if (!limit) return changed
    // The preview itself, as every read of this caller gets it.
    const { body } = await this.deps.reads.export(caller.accountId, noteId, { format: 'json', limit })
    const visible = new Map((body as Transcript).segments.map((s) => [s.sequence, s.text.length]))
    return changed.filter((c) => visible.has(c.sequence)).map((c) => ({ ...c, before: c.before.slice(0, limit.maxChars), after: c.after.slice(0, visible.get(c.sequence)) }))
  }

  /**
   * POST translation: queues it (202 with progress) unless it is already done (200, free to
   * repeat). A ready translation that went stale is queued again for its missing segments. A
   * pair the installed engine cannot translate is refused now (409 translation_pair_unsupported),
   * not queued to fail.
   */
  async requestTranslation(caller: Caller, noteId: string, language: TranslationLanguage): Promise<{ queued: boolean; state: TranslationState }> {
    const capability = await this.deps.translationCapability()
    const r = await this.run(caller, noteId, { type: 'RequestTranslation', accountId: caller.accountId, language, requestId: caller.requestId, capability }, ['translations'])
    const t = r.state.exists ? r.state.translations[language] : undefined
    const done = r.events.length === 0 && t?.status === 'ready'
    if (r.events.length > 0) this.deps.wakeTranslations?.()
    return { queued: !done, state: await this.deps.reads.translation(caller.accountId, noteId, language, transcriptPreviewFor(caller.plan)) }
  }

  /** GET /v1/translation/pairs: what a translation can be requested for here. */
  translationPairs(): Promise<TranslationCapability> {
    return this.deps.translationCapability()
  }

  /** PATCH speakers/{label}: the user's name for a speaker, remembered for the note's source. */
  async renameSpeaker(caller: Caller, noteId: string, label: string, name: string, voiceExcluded?: boolean): Promise<SpeakerList> {
    const state = await this.load(noteId)
    const sourceKey = state.exists ? sourceKeyOf({ provider: state.provider, sourceUrl: state.sourceUrl, metadata: state.metadata }) : null
    await this.run(caller, noteId, { type: 'RenameSpeaker', accountId: caller.accountId, label, name, sourceKey }, ['speakers'])
    if (voiceExcluded !== undefined) await this.setVoiceExclusion(caller, noteId, label, voiceExcluded)
    return this.deps.reads.speakers(caller.accountId, noteId, transcriptPreviewFor(caller.plan))
  }

  /** 'Do not recognise this person' for one speaker of one note. */
  async setVoiceExclusion(caller: Caller, noteId: string, label: string, excluded: boolean): Promise<SpeakerList> {
    await this.run(caller, noteId, { type: 'SetSpeakerVoiceExclusion', accountId: caller.accountId, label, excluded }, ['speakers'])
    return this.deps.reads.speakers(caller.accountId, noteId, transcriptPreviewFor(caller.plan))
  }

  /**
   * POST speakers/suggest: infers names (content, title, source metadata, roster; no voice).
   * When the inference fails nothing is recorded and the caller gets 502 speaker_naming_failed.
   */
  async suggestSpeakerNames(caller: Caller, noteId: string): Promise<SpeakerList> {
    const state = await this.load(noteId)
    if (!state.exists || state.accountId !== caller.accountId) throw new DomainError('not_found', 'No note with that id belongs to you.')
    if (state.phase !== 'ready' || !state.transcript) throw new DomainError('note_not_ready', 'Speaker names can be suggested once the note is ready.')
    const note = state as TranscriptNoteState & { transcript: NonNullable<TranscriptNoteState['transcript']> }
    const roster = await this.deps.reads.roster(caller.accountId, sourceKeyOf({ provider: note.provider, sourceUrl: note.sourceUrl, metadata: note.metadata }), noteId)
    let suggestions
    try {
      suggestions = await this.deps.namer.suggest({
        title: note.title,
        metadata: note.metadata,
        segments: [...note.transcript.segments].sort((a, b) => a.sequence - b.sequence).map((s) => ({ sequence: s.sequence, speakerLabel: s.speakerLabel, text: s.text })),
        roster,
      })
    } catch (err) {
      throw new DomainError('speaker_naming_failed', `Speaker names could not be inferred; nothing was changed. ${(err as Error).message}`)
    }
    await this.run(caller, noteId, { type: 'RecordNameSuggestions', accountId: caller.accountId, engine: this.deps.namer.engine, model: this.deps.namer.model, suggestions }, ['speakers'])
    return this.deps.reads.speakers(caller.accountId, noteId, transcriptPreviewFor(caller.plan))
  }

  /** For the pipeline: show or channel metadata of the note's source (feeds the roster key and the namer). */
  async recordSourceMetadata(noteId: string, metadata: SourceMetadata): Promise<void> {
    await this.run(null, noteId, { type: 'RecordSourceMetadata', metadata }, ['speakers'])
  }
}
