// Seeds the sample library of the public demo endpoint: its own account (no API key, so nobody
// can sign in as it), its folders, its ready notes, their speaker names, analyses and outlines.
// Runs at every start; everything has a fixed id and every command is one the deciders turn into
// nothing when it is already done (notes into empty streams only, a name that is already the
// speaker's, an analysis whose chargeId is recorded, a note that has its outline), so a second
// run (or two processes starting together) changes nothing.
import { DEMO_ACCOUNT_ID, DEMO_ACCOUNT_NAME, DEMO_FOLDERS, DEMO_NOTES, DEMO_PLAN, demoAnalysesCommand, demoNoteDecider, demoOutlineCommand } from '../domain/demo/dataset.ts'
import { folderDecider, folderStream } from '../domain/folders/folder.ts'
import { noteStream } from '../domain/notes/note.ts'
import { analysisDecider, analysisStream } from '../domain/analysis/analysis.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import type { CommandHandler } from '../commands/handleCommand.ts'
import type { AccountCommands } from '../commands/accounts.ts'
import type { TranscriptCommands } from '../commands/transcripts.ts'
import { demoCaller } from '../commands/context.ts'
import type { EventStore } from '../ports/eventStore.ts'

/** How long seeding waits for a rebuild of the read models it reads. */
const REBUILD_WAIT_MS = 10 * 60_000
const FOLDERS_CREATED_AT = '2026-02-01T00:00:00.000Z'

export interface DemoDatasetDeps {
  handler: CommandHandler
  accounts: AccountCommands
  sync: ReadModelSync
  events: EventStore
  /** Speaker names go through the same command as PATCH /v1/notes/{id}/speakers/{label}. */
  transcripts: TranscriptCommands
}

export async function seedDemoDataset(deps: DemoDatasetDeps): Promise<{ accountId: string; notes: number; folders: number }> {
  await deps.accounts.openAccount({ accountId: DEMO_ACCOUNT_ID, name: DEMO_ACCOUNT_NAME, plan: DEMO_PLAN })
  let folderPosition: number | null = null
  for (const f of DEMO_FOLDERS) {
    const r = await deps.handler.handle(folderStream.of(f.folderId), { type: 'CreateFolder', folderId: f.folderId, accountId: DEMO_ACCOUNT_ID, name: f.name, now: FOLDERS_CREATED_AT }, folderDecider)
    folderPosition = r.position ?? folderPosition
  }
  let notePosition: number | null = null
  for (const note of DEMO_NOTES) {
    const r = await deps.handler.handle(noteStream.of(note.noteId), { type: 'SeedDemoNote', note }, demoNoteDecider, { metadata: { seed: 'mcp-demo' } })
    notePosition = r.position ?? notePosition
  }
  // Folder note counts read the notes model: both must be there before the first demo call.
  await Promise.all([deps.sync.waitFor('folders', folderPosition), deps.sync.waitFor('notes', notePosition)])
  // The speaker names below read the notes and speakers models. When the notes were seeded by an
  // earlier start, nothing was appended now, and after a lost read-model store those models are
  // still being rebuilt from the log: wait until they hold the demo notes' streams.
  const seeded = Math.max(-1, ...(await Promise.all(DEMO_NOTES.map(async (n) => (await deps.events.readStream(noteStream.of(n.noteId))).events.at(-1)?.globalPosition ?? -1))))
  if (seeded >= 0) await Promise.all(['notes', 'speakers', 'folders'].map((name) => deps.sync.caughtUp(name, seeded, REBUILD_WAIT_MS)))
  let analysisPosition: number | null = null
  for (const note of DEMO_NOTES) {
    // The command waits for the speakers read model itself.
    for (const [label, name] of Object.entries(note.speakerNames)) await deps.transcripts.renameSpeaker(demoCaller(`seed:${note.key}:${label}`), note.noteId, label, name)
    for (const command of [demoAnalysesCommand(note), demoOutlineCommand(note)]) {
      const r = await deps.handler.handle(analysisStream.of(note.noteId), command, analysisDecider, { metadata: { seed: 'mcp-demo' } })
      analysisPosition = r.position ?? analysisPosition
    }
  }
  await deps.sync.waitFor('analysis', analysisPosition)
  return { accountId: DEMO_ACCOUNT_ID, notes: DEMO_NOTES.length, folders: DEMO_FOLDERS.length }
}
