// Every read-model projection the service runs (role `projections`). A new read model is added
// here and nowhere else; `rebuild` and the tests take the list from here too.
import type { Projection } from '../projections/runner.ts'
import { ledgerProjection } from '../projections/ledger.ts'
import { notesProjection } from '../projections/notes.ts'
import { foldersProjection } from '../projections/folders.ts'
import { apiKeysProjection } from '../projections/apiKeys.ts'
import { speakersProjection } from '../projections/speakers.ts'
import { translationsProjection } from '../projections/translations.ts'
import { voiceProfilesProjection } from '../projections/voiceProfiles.ts'
import { analysisProjection } from '../projections/analysis.ts'
import { segmentIndexProjection } from '../projections/segmentIndex.ts'
import { deliverablesProjection } from '../projections/deliverables.ts'
import { transcriptionJobsProjection } from '../projections/transcriptionJobs.ts'
import { webhooksProjection } from '../projections/webhooks.ts'
import { oauthProjection } from '../projections/oauth.ts'

export const READ_MODEL_PROJECTIONS: Projection[] = [
  ledgerProjection,
  notesProjection,
  foldersProjection,
  apiKeysProjection,
  speakersProjection,
  translationsProjection,
  voiceProfilesProjection,
  analysisProjection,
  segmentIndexProjection,
  deliverablesProjection,
  transcriptionJobsProjection,
  webhooksProjection,
  oauthProjection,
]
