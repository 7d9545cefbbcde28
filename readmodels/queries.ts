// The read side as the edges and the commands see it: query objects over the read models, grouped
// by what they read (`queries.notes.detail(accountId, id)`), so a route, a tool or a command never
// holds the document store. Each query is the function of its module with the store (and the
// base URL of download links) already given; the groups implement the ports of commands/reads.ts.
import type { DocumentStore } from '../ports/documentStore.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import { isDomainError } from '../domain/errors.ts'
import { analysisHistory, latestAnalysisDraft, listAnalyses, readOutline } from './analysis.ts'
import { listApiKeys } from './apiKeys.ts'
import { deliverableFile, getDeliverable, listDeliverables } from './deliverables.ts'
import { listFolders } from './folders.ts'
import { listHighlights, listMarkers } from './highlights.ts'
import { cycleStatement, ledgerCycles } from './ledger.ts'
import { readyNote } from './noteSource.ts'
import { waitForNote } from './noteWait.ts'
import { getNoteDetail, listNotes, listNotesJson, noteIdsInFolder } from './notes.ts'
import { searchSegments, segmentTexts } from './retrieval.ts'
import { exportTranscript, getSpeakerTimeline, getSpeakers, getTranscript, getTranslation, getVoiceProfiles, notesMatchedTo, requireTranscript, rosterFor } from './transcripts.ts'
import { webhookDeliveries, webhookEndpoints } from './webhooks.ts'

export interface ReadQueryOptions {
  baseUrl: string
  sync?: Pick<ReadModelSync, 'readable' | 'waitFor'>
  /**
   * Where the note's last event is in the log, when the note exists there and is the account's
   * (null otherwise). A read of one note that finds nothing asks it, and waits for the notes
   * projection to get there: the note may have been created through another API process, whose
   * pending position this process does not know.
   */
  noteWritten?: (accountId: string, noteId: string) => Promise<number | null>
}

export function readQueries(docs: DocumentStore, o: ReadQueryOptions) {
  const sync = o.sync
  /**
   * `f(docs, ...rest)` as `(...rest)`. Every query takes the account first; when that account's
   * note commands answered before the notes projection had their events (read-your-writes on
   * the read: `ReadModelSync.wrote`), the read waits for them first. Every group, since many
   * read the notes collection too (a transcript's owner, titles in statements and search).
   */
  const over =
    <A extends unknown[], R>(f: (docs: DocumentStore, ...a: A) => R) =>
    (...a: A): R => {
      const wait = sync && typeof a[0] === 'string' ? sync.readable(a[0], NOTES_READ_MODEL) : null
      return wait ? (wait.then(() => f(docs, ...a)) as R) : f(docs, ...a)
    }
  /** `f` of one note; when the note is not found, once more after the projection has what the log holds of it. */
  const oneNote =
    <A extends unknown[], R>(f: (accountId: string, noteId: string, ...a: A) => Promise<R>) =>
    async (accountId: string, noteId: string, ...a: A): Promise<R> => {
      try {
        return await f(accountId, noteId, ...a)
      } catch (err) {
        if (!(isDomainError(err) && err.code === 'not_found') || !o.noteWritten || !sync) throw err
        const position = await o.noteWritten(accountId, noteId)
        if (position === null) throw err
        await sync.waitFor(NOTES_READ_MODEL, position)
        return f(accountId, noteId, ...a)
      }
    }
  return {
    notes: { list: over(listNotes), listJson: over(listNotesJson), detail: oneNote(over(getNoteDetail)), waitFor: over(waitForNote), ready: oneNote(over(readyNote)), idsInFolder: over(noteIdsInFolder) },
    transcripts: {
      get: over(getTranscript),
      require: over(requireTranscript),
      export: over(exportTranscript),
      translation: over(getTranslation),
      speakers: over(getSpeakers),
      timeline: over(getSpeakerTimeline),
      roster: over(rosterFor),
    },
    voice: { profiles: over(getVoiceProfiles), notesMatchedTo: over(notesMatchedTo) },
    analysis: {
      list: over(listAnalyses),
      history: over(analysisHistory),
      outline: over(readOutline),
      latestDraft: over(latestAnalysisDraft),
      highlights: over(listHighlights),
      markers: over(listMarkers),
    },
    segments: { search: over(searchSegments), texts: over(segmentTexts) },
    deliverables: {
      get: over((d, accountId: string, id: string) => getDeliverable(d, accountId, id, o.baseUrl)),
      list: over((d, accountId: string, noteId: string) => listDeliverables(d, accountId, noteId, o.baseUrl)),
      file: over(deliverableFile),
    },
    webhooks: { endpoints: over(webhookEndpoints), deliveries: over(webhookDeliveries) },
    folders: { list: over(listFolders) },
    ledger: { cycles: over(ledgerCycles), statement: over(cycleStatement) },
    apiKeys: { list: over(listApiKeys) },
  }
}

/** The projection whose positions note commands leave for the next read (commands/notes.ts). */
export const NOTES_READ_MODEL = 'notes'

export type ReadQueries = ReturnType<typeof readQueries>
