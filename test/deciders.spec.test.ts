// Given/when/then specs, on the shared DeciderSpecification (test/support/decider.ts), for the
// deciders that had none: folders and accounts.
import t from 'tap'
import { DeciderSpecification } from './support/decider.ts'
import { folderDecider, type FolderEvent } from '../domain/folders/folder.ts'
import { accountDecider, type AccountEvent } from '../domain/accounts/account.ts'

const at = '2026-03-01T10:00:00.000Z'
const later = '2026-03-02T10:00:00.000Z'

t.test('folder decider', async (t) => {
  const folder = DeciderSpecification.for(folderDecider)
  const created: FolderEvent = { type: 'FolderCreated', data: { folderId: 'f1', accountId: 'a1', name: 'Calls', at } }
  folder.given([]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a1', name: 'Calls', now: at }).then(t, [created])
  folder.given([created]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a1', name: 'Calls', now: later }).thenNothingHappened(t, 'creating it again is a retry')
  folder.given([created]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a2', name: 'Mine', now: later }).thenThrows(t, 'conflict')
  folder.given([created]).when({ type: 'RenameFolder', accountId: 'a1', name: 'Clients', now: later }).then(t, [{ type: 'FolderRenamed', data: { name: 'Clients', at: later } }])
  folder.given([created]).when({ type: 'RenameFolder', accountId: 'a1', name: 'Calls', now: later }).thenNothingHappened(t, 'the same name changes nothing')
  folder.given([created]).when({ type: 'RenameFolder', accountId: 'a2', name: 'Stolen', now: later }).thenThrows(t, 'not_found', /belongs to you/)
  folder.given([]).when({ type: 'RenameFolder', accountId: 'a1', name: 'x', now: later }).thenThrows(t, 'not_found')
  const deleted: FolderEvent = { type: 'FolderDeleted', data: { at: later } }
  folder.given([created]).when({ type: 'DeleteFolder', accountId: 'a1', now: later }).then(t, [deleted])
  folder.given([created, deleted]).when({ type: 'DeleteFolder', accountId: 'a1', now: later }).thenNothingHappened(t, 'deleting twice is a retry')
  folder.given([created, deleted]).when({ type: 'DeleteFolder', accountId: 'a2', now: later }).thenThrows(t, 'not_found', /belongs to you/)
  folder.given([created, deleted]).when({ type: 'RenameFolder', accountId: 'a1', name: 'Back', now: later }).thenThrows(t, 'not_found')
  folder.given([created]).when({ type: 'DeleteFolder', accountId: 'a2', now: later }).thenThrows(t, 'not_found')
})

t.test('account decider', async (t) => {
  const account = DeciderSpecification.for(accountDecider)
  const opened: AccountEvent = { type: 'AccountOpened', data: { accountId: 'a1', name: 'Acme', email: null, at } }
  account.given([]).when({ type: 'OpenAccount', accountId: 'a1', name: 'Acme', email: null, now: at }).then(t, [opened])
  account.given([opened]).when({ type: 'OpenAccount', accountId: 'a1', name: 'Acme', email: null, now: later }).thenNothingHappened(t, 'opening twice is a retry')
  account.given([opened]).when({ type: 'RenameAccount', name: 'Acme Ltd', now: later }).then(t, [{ type: 'AccountRenamed', data: { name: 'Acme Ltd', at: later } }])
  account.given([opened]).when({ type: 'RenameAccount', name: 'Acme', now: later }).thenNothingHappened(t)
  account.given([]).when({ type: 'RenameAccount', name: 'Ghost', now: later }).thenThrows(t, 'not_found')
})

t.test('the specification itself fails a wrong expectation', async (t) => {
  const failures: string[] = []
  const probe = { same: (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b) || failures.push('same'), fail: () => failures.push('fail'), equal: (a: unknown, b: unknown) => a === b || failures.push('equal') }
  const folder = DeciderSpecification.for(folderDecider)
  folder.given([]).when({ type: 'RenameFolder', accountId: 'a1', name: 'x', now: at }).thenThrows(probe, 'conflict')
  folder.given([]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a1', name: 'x', now: at }).thenThrows(probe, 'not_found')
  folder.given([]).when({ type: 'CreateFolder', folderId: 'f1', accountId: 'a1', name: 'x', now: at }).thenNothingHappened(probe)
  t.same(failures, ['equal', 'fail', 'same'])
})

t.test('transcript edits: another account’s note or none is not_found, the own note without a transcript no_transcript (issue 17, item 5)', async (t) => {
  const { noteTranscriptDecider } = await import('../domain/notes/noteTranscript.ts')
  const { transcriptOf } = await import('./support/transcripts.ts')
  type E = Parameters<typeof noteTranscriptDecider.evolve>[1]
  const note = DeciderSpecification.for(noteTranscriptDecider)
  const created = {
    type: 'NoteCreated',
    data: { noteId: 'n1', accountId: 'a1', sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: 'T', language: null, keepAudio: false, upload: null, jobId: null, reservationId: null, at },
  } as unknown as E
  const transcribed = { type: 'NoteTranscribed', data: { transcript: transcriptOf([['A', 0, 1000, 'Hola.']]), at } } as unknown as E
  const commands = (accountId: string) =>
    [
      { type: 'RenameSpeaker', accountId, label: 'A', name: 'Ana', sourceKey: null, now: later },
      { type: 'SetSpeakerVoiceExclusion', accountId, label: 'A', excluded: true, now: later },
      { type: 'ReplaceInTranscript', accountId, find: 'Hola', replace: 'Hey', caseSensitive: false, wholeWord: false, now: later },
    ] as const
  for (const c of commands('a2')) {
    note.given([]).when(c).thenThrows(t, 'not_found', /belongs to you/)
    note.given([created, transcribed]).when(c).thenThrows(t, 'not_found', /belongs to you/)
  }
  for (const c of commands('a1')) note.given([created]).when(c).thenThrows(t, 'no_transcript')
  note.given([created, transcribed]).when(commands('a1')[0]).then(t, [{ type: 'SpeakerRenamed', data: { label: 'A', name: 'Ana', previousName: null, sourceKey: null, at: later } } as unknown as E])
})
