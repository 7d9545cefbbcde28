// Every read-model projection the service runs (role `projections`). A new read model is added
// here and nowhere else; `rebuild` and the tests take the list from here too.
import type { Projection } from '../projections/runner.ts'
import { ledgerProjection } from '../projections/ledger.ts'
import { notesProjection } from '../projections/notes.ts'
import { foldersProjection } from '../projections/folders.ts'
import { apiKeysProjection } from '../projections/apiKeys.ts'
import { transcriptionJobsProjection } from '../projections/transcriptionJobs.ts'
import { webhooksProjection } from '../projections/webhooks.ts'

export const READ_MODEL_PROJECTIONS: Projection[] = [ledgerProjection, notesProjection, foldersProjection, apiKeysProjection, transcriptionJobsProjection, webhooksProjection]
