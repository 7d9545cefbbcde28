// The read side as the edges and the commands see it: query objects over the read models, grouped
// by what they read (`queries.notes.detail(accountId, id)`), so a route, a tool or a command never
// holds the document store. Each query is the function of its module with the store (and the
// base URL of download links) already given; the groups implement the ports of commands/reads.ts.
import type { DocumentStore } from '../ports/documentStore.ts'
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
import { exportTranscript, findTranscript, getSpeakerTimeline, getSpeakers, getTranscript, getTranslation, getVoiceProfiles, notesMatchedTo, rosterFor } from './transcripts.ts'
import { webhookDeliveries, webhookEndpoints } from './webhooks.ts'

export function readQueries(docs: DocumentStore, o: { baseUrl: string }) {
  /** `f(docs, ...rest)` as `(...rest)`. */
  const over =
    <A extends unknown[], R>(f: (docs: DocumentStore, ...a: A) => R) =>
    (...a: A): R =>
      f(docs, ...a)
  return {
    notes: { list: over(listNotes), listJson: over(listNotesJson), detail: over(getNoteDetail), waitFor: over(waitForNote), ready: over(readyNote), idsInFolder: over(noteIdsInFolder) },
    transcripts: {
      get: over(getTranscript),
      require: over(findTranscript),
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
      get: (accountId: string, id: string) => getDeliverable(docs, accountId, id, o.baseUrl),
      list: (accountId: string, noteId: string) => listDeliverables(docs, accountId, noteId, o.baseUrl),
      file: over(deliverableFile),
    },
    webhooks: { endpoints: over(webhookEndpoints), deliveries: over(webhookDeliveries) },
    folders: { list: over(listFolders) },
    ledger: { cycles: over(ledgerCycles), statement: over(cycleStatement) },
    apiKeys: { list: over(listApiKeys) },
  }
}

export type ReadQueries = ReturnType<typeof readQueries>
