// Every REST route of the service, in the order the contract lists them. A new feature adds its
// route module here and nowhere else.
import type { Services } from '../../app/services.ts'
import type { RouteDef } from '../route.ts'
import { notesRoutes } from './notes.ts'
import { foldersRoutes } from './folders.ts'
import { uploadRoutes } from './uploads.ts'
import { webhookRoutes } from './webhooks.ts'

export const featureRoutes = (s: Services): RouteDef[] => [...notesRoutes(s), ...foldersRoutes(s), ...uploadRoutes(s), ...webhookRoutes(s)]
