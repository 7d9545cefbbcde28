// Every REST route of the service, in the order the contract lists them. A new feature adds its
// route module here and nowhere else.
import type { Application } from '../../commands/application.ts'
import type { RouteDef } from '../route.ts'
import { notesRoutes } from './notes.ts'
import { foldersRoutes } from './folders.ts'
import { uploadRoutes } from './uploads.ts'
import { accountRoutes } from './account.ts'
import { transcriptRoutes } from './transcripts.ts'
import { analysisRoutes } from './analysis.ts'
import { askRoutes } from './ask.ts'
import { deliverableRoutes } from './deliverables.ts'
import { webhookRoutes } from './webhooks.ts'
import { clipRoutes } from './clips.ts'

export const featureRoutes = (app: Application): RouteDef[] => [
  ...notesRoutes(app),
  ...foldersRoutes(app),
  ...uploadRoutes(app),
  ...transcriptRoutes(app),
  ...analysisRoutes(app),
  ...askRoutes(app),
  ...deliverableRoutes(app),
  ...webhookRoutes(app),
  ...clipRoutes(app),
  ...accountRoutes(app),
]
