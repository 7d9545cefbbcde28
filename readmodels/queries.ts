// The read side as the edges see it: query objects over the read models, grouped by what they
// read (`queries.notes.detail(accountId, id)`), so a route or tool never holds the document store.
// Each query is the function of its module with the store already given.
import type { DocumentStore } from '../ports/documentStore.ts'
import { analysisHistory, listAnalyses, readOutline } from './analysis.ts'
import { listApiKeys } from './apiKeys.ts'
import { listFolders } from './folders.ts'
import { listHighlights, listMarkers } from './highlights.ts'
import { cycleStatement, ledgerCycles } from './ledger.ts'
import { waitForNote } from './noteWait.ts'
import { getNoteDetail, listNotes, listNotesJson } from './notes.ts'
import { getSpeakerTimeline, getSpeakers, getTranscript, getTranslation } from './transcripts.ts'

export function readQueries(docs: DocumentStore) {
  /** `f(docs, ...rest)` as `(...rest)`. */
  const over =
    <A extends unknown[], R>(f: (docs: DocumentStore, ...a: A) => R) =>
    (...a: A): R =>
      f(docs, ...a)
  return {
    notes: { list: over(listNotes), listJson: over(listNotesJson), detail: over(getNoteDetail), waitFor: over(waitForNote) },
    transcripts: { get: over(getTranscript), translation: over(getTranslation), speakers: over(getSpeakers), timeline: over(getSpeakerTimeline) },
    analysis: { list: over(listAnalyses), history: over(analysisHistory), outline: over(readOutline), highlights: over(listHighlights), markers: over(listMarkers) },
    folders: { list: over(listFolders) },
    ledger: { cycles: over(ledgerCycles), statement: over(cycleStatement) },
    apiKeys: { list: over(listApiKeys) },
  }
}

export type ReadQueries = ReturnType<typeof readQueries>
