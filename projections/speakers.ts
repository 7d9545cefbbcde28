// The speakers read models, from the note streams:
// - `speakers`: per note, each diarized label's stats and naming state (user-given name,
//   inferred name and evidence, voice match, voice exclusion), plus what the roster needs
//   (source key, first speaker);
// - `speaker_roster_entries`: one line per name the user confirmed on a note with a known
//   source, so later notes of the same podcast or channel can be offered those names.
// Guarded by stream revision, so re-applying an event changes nothing.
import type { DocumentStore } from '../ports/documentStore.ts'
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import type { NoteEvent } from '../domain/notes/note.ts'
import { evolveSpeakers, type TranscriptEvent } from '../domain/notes/noteTranscript.ts'
import { firstSpeakerLabel, speakerStats, statsAfterMoves, type SpeakerStats } from '../domain/notes/transcript.ts'
import { sourceKeyOf, type SourceMetadata } from '../domain/speakers/sourceKey.ts'
import type { SpeakerState } from '../domain/speakers/speakers.ts'
import type { Projection } from './runner.ts'
import { applyBatched } from './batchedDocuments.ts'
import { noteStream } from '../domain/notes/note.ts'

export const SPEAKERS = 'speakers'
export const ROSTER_ENTRIES = 'speaker_roster_entries'
/**
 * Timelines were projected here until a line could move to another speaker; they are read from
 * the transcript now (readmodels/transcripts.ts). A store written before still holds them: a note
 * deleted takes its old timeline along, and a rebuild empties the collection.
 */
const OLD_TIMELINES = 'speaker_timelines'

export interface SpeakersDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  title: string
  provider: string | null
  sourceUrl: string | null
  metadata: SourceMetadata | null
  sourceKey: string | null
  hasTranscript: boolean
  /** The label of the first segment with a speaker. */
  firstLabel: string | null
  stats: SpeakerStats[]
  speakers: Record<string, SpeakerState>
  revision: number
}

export interface RosterEntryDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  sourceKey: string
  noteId: string
  label: string
  name: string
  wasFirstSpeaker: boolean
  at: string
}

export const speakersProjection: Projection = {
  name: 'speakers',
  filter: { categories: ['note'] },
  collections: [SPEAKERS, ROSTER_ENTRIES, OLD_TIMELINES],
  async setup(docs) {
    await docs.collection(ROSTER_ENTRIES).createIndex({ keys: { accountId: 1, sourceKey: 1, at: 1 }, name: 'by_account_source' })
  },
  async handle(events, docs) {
    // One read and one write per batch (projections/batchedDocuments.ts); the note events it
    // ignores (progress, uploads, readiness) are left out before anything is read.
    await applyBatched(docs.collection<SpeakersDoc>(SPEAKERS), events.filter((e) => e.type === 'NoteCreated' || SPEAKER_EVENTS.has(e.type)), {
      idOf: (e) => noteStream.idOf(e.streamName),
      created: (e) => (e.type === 'NoteCreated' ? createdSpeakers(e) : null),
      evolve: (doc, e) => evolve(doc, e, docs),
    })
  },
}

/** A note's speakers document, empty until its transcript comes; inserted if absent (projections/bulkCreates.ts). */
function createdSpeakers(recorded: RecordedEvent): SpeakersDoc {
  const d = toDomainEvent<Extract<NoteEvent, { type: 'NoteCreated' }>>(recorded).data
  return {
    _id: noteStream.idOf(recorded.streamName),
    accountId: d.accountId,
    title: d.title,
    provider: d.provider,
    sourceUrl: d.sourceUrl,
    metadata: null,
    sourceKey: sourceKeyOf({ provider: d.provider, sourceUrl: d.sourceUrl, metadata: null }),
    hasTranscript: false,
    firstLabel: null,
    stats: [],
    speakers: {},
    revision: recorded.revision,
  }
}

/** The events (besides the create) that change a note's speakers document. */
const SPEAKER_EVENTS = new Set([
  'NoteDeleted',
  'NoteFinalized',
  'NoteEdited',
  'NoteSourceMetadataRecorded',
  'NoteTranscribed',
  'SegmentSpeakersChanged',
  'SpeakerRenamed',
  'SpeakerNamesSuggested',
  'SpeakerVoiceExclusionChanged',
  'SpeakerVoiceMatched',
])

/** The speakers document after `recorded` (null: deleted; `doc` itself: unchanged); writes roster entries on the way. */
async function evolve(doc: SpeakersDoc | null, recorded: RecordedEvent, docs: DocumentStore): Promise<SpeakersDoc | null> {
  const e = toDomainEvent<NoteEvent | TranscriptEvent>(recorded)
  const id = noteStream.idOf(recorded.streamName)
  if (e.type === 'NoteDeleted') {
    await docs.collection(OLD_TIMELINES).deleteOne({ _id: id })
    await docs.collection(ROSTER_ENTRIES).deleteMany({ noteId: id })
    return null
  }
  if (!doc || doc.revision >= recorded.revision) return doc
  const set: Partial<SpeakersDoc> = {}
  switch (e.type) {
    case 'NoteFinalized':
      if (e.data.title !== null) set.title = e.data.title
      break
    case 'NoteEdited':
      if (e.data.title !== undefined) set.title = e.data.title
      break
    case 'NoteSourceMetadataRecorded': {
      const metadata = { ...doc.metadata, ...e.data.metadata }
      set.metadata = metadata
      set.sourceKey = sourceKeyOf({ provider: doc.provider, sourceUrl: doc.sourceUrl, metadata })
      break
    }
    case 'NoteTranscribed': {
      const segments = e.data.transcript.segments
      set.hasTranscript = true
      set.stats = speakerStats(segments, e.data.transcript.speakerConfidence)
      set.firstLabel = firstSpeakerLabel(segments)
      set.speakers = evolveSpeakers(doc.speakers, e)
      break
    }
    case 'SegmentSpeakersChanged':
      set.stats = statsAfterMoves(doc.stats, e.data.changes)
      set.firstLabel = e.data.firstLabel
      break
    case 'SpeakerRenamed': {
      set.speakers = evolveSpeakers(doc.speakers, e)
      if (e.data.sourceKey) {
        const entry: RosterEntryDoc = {
          _id: `${id}:${e.data.label}`,
          accountId: doc.accountId,
          sourceKey: e.data.sourceKey,
          noteId: id,
          label: e.data.label,
          name: e.data.name,
          wasFirstSpeaker: doc.firstLabel === e.data.label,
          at: e.data.at,
        }
        await docs.collection<RosterEntryDoc>(ROSTER_ENTRIES).replaceOne({ _id: entry._id }, entry, { upsert: true })
      }
      break
    }
    case 'SpeakerNamesSuggested':
    case 'SpeakerVoiceExclusionChanged':
    case 'SpeakerVoiceMatched':
      set.speakers = evolveSpeakers(doc.speakers, e)
      break
    default:
      return doc
  }
  return { ...doc, ...set, revision: recorded.revision }
}
