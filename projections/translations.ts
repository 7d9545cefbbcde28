// The translations read model: one document per note and language with its state and the
// translated segments (by `sequence`). The translation worker finds its work here (`pending`,
// or `running` past its lease). Guarded by the note stream's revision per document.
import type { DocumentStore } from '../ports/documentStore.ts'
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import type { NoteEvent } from '../domain/notes/note.ts'
import { evolveTranslation, translationAfterRetranscription, type TranscriptEvent, type TranslationState } from '../domain/notes/noteTranscript.ts'
import type { TranslationLanguage } from '../domain/languages.ts'
import type { Projection } from './runner.ts'
import { applyWithBulkCreates, noteOwners } from './bulkCreates.ts'
import { replaceRead } from './revisionGuard.ts'
import { noteStream } from '../domain/notes/note.ts'

export const TRANSLATIONS = 'translations'

/** The decider's translation state as stored: segments as a list (by `sequence`), plus the note's ids. */
export interface TranslationDoc extends Omit<TranslationState, 'segments'> {
  _id: string
  [key: string]: unknown
  noteId: string
  accountId: string
  segments: { sequence: number; text: string; sourceHash: string }[]
  totalSegments: number
  revision: number
}

export const translationId = (noteId: string, language: string) => `${noteId}:${language}`

const toState = (d: TranslationDoc): TranslationState => {
  const { _id, noteId: _n, accountId: _a, totalSegments: _t, revision: _r, segments, ...state } = d
  return { ...(state as Omit<TranslationState, 'segments'>), segments: Object.fromEntries(segments.map((s) => [s.sequence, { text: s.text, sourceHash: s.sourceHash }])) }
}

const fromState = (t: TranslationState, base: Pick<TranslationDoc, '_id' | 'noteId' | 'accountId' | 'totalSegments'>, revision: number): TranslationDoc => {
  const { segments, ...rest } = t
  return {
    ...base,
    ...rest,
    segments: Object.entries(segments)
      .map(([seq, v]) => ({ sequence: Number(seq), text: v.text, sourceHash: v.sourceHash }))
      .sort((a, b) => a.sequence - b.sequence),
    revision,
  }
}

export const translationsProjection: Projection = {
  name: 'translations',
  filter: { categories: ['note'] },
  collections: [TRANSLATIONS, '_translation_owners'],
  async setup(docs) {
    await docs.collection(TRANSLATIONS).createIndex({ keys: { status: 1, updatedAt: 1 }, name: 'by_status' })
    await docs.collection(TRANSLATIONS).createIndex({ keys: { noteId: 1 }, name: 'by_note' })
  },
  async handle(events, docs) {
    await applyWithBulkCreates(events, docs, noteOwners(OWNERS), (e) => apply(e, docs))
  },
}

/** Who owns a note, kept here so a translation document can be created with its account. */
const OWNERS = '_translation_owners'

async function apply(recorded: RecordedEvent, docs: DocumentStore) {
  const e = toDomainEvent<NoteEvent | TranscriptEvent>(recorded)
  const noteId = noteStream.idOf(recorded.streamName)
  const col = docs.collection<TranslationDoc>(TRANSLATIONS)
  switch (e.type) {
    case 'NoteDeleted':
      await col.deleteMany({ noteId })
      await docs.collection(OWNERS).deleteOne({ _id: noteId })
      return
    case 'NoteTranscribed': {
      for (const d of await col.find({ noteId })) {
        if (d.revision >= recorded.revision) continue
        const next = translationAfterRetranscription(toState(d), e.data.transcript.segments, e.data.at)
        await replaceRead(col, d, fromState(next, { _id: d._id, noteId, accountId: d.accountId, totalSegments: e.data.transcript.segments.length }, recorded.revision))
      }
      return
    }
    case 'TranscriptTextReplaced': {
      for (const d of await col.find({ noteId })) {
        if (d.revision >= recorded.revision) continue
        const next = evolveTranslation(toState(d), e)!
        await replaceRead(col, d, fromState(next, d, recorded.revision))
      }
      return
    }
    case 'TranslationRequested':
    case 'TranslationStarted':
    case 'TranslationSegmentsTranslated':
    case 'TranslationCompleted':
    case 'TranslationFailed': {
      const _id = translationId(noteId, e.data.language)
      const d = await col.findOne({ _id })
      if (d && d.revision >= recorded.revision) return
      const next = evolveTranslation(d ? toState(d) : undefined, e)
      if (!next) return
      const owner = d ? d.accountId : ((await docs.collection(OWNERS).findOne({ _id: noteId }))?.accountId as string | undefined)
      if (!owner) return
      const totalSegments = e.type === 'TranslationRequested' ? e.data.totalSegments : (d?.totalSegments ?? 0)
      // Over the revision read (projections/revisionGuard.ts): a late instance's older state is dropped.
      await replaceRead(col, d, fromState(next, { _id, noteId, accountId: owner, totalSegments }, recorded.revision))
      return
    }
    default:
      return
  }
}
