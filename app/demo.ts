// The demo account `npm start` seeds on a fresh data directory, so the first curl works without
// any set-up. Its key is kept in DATA_DIR/demo-credentials.json (mode 0600) so later starts can
// print it again; that file is a local convenience: the event store itself keeps only the hash.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { uuidFromName } from '../domain/ids.ts'
import type { Services } from './services.ts'

export interface DemoCredentials {
  accountId: string
  apiKey: string
}

export async function seedDemoAccount(s: Services): Promise<DemoCredentials | null> {
  const file = join(s.config.dataDir, 'demo-credentials.json')
  const accountId = uuidFromName('notes-service', 'demo-account')
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials
  // An account without the file: the key was printed before and is not recoverable.
  if (await s.accounts.accountExists(accountId)) return null
  await s.accounts.openAccount({ accountId, name: 'Demo', plan: 'pro' })
  const { apiKey } = await s.accounts.createApiKey(accountId, 'demo')
  const creds = { accountId, apiKey }
  writeFileSync(file, JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 })
  return creds
}
