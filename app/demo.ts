// The demo account `npm start` seeds on a fresh data directory, so the first curl works without
// any set-up, and its demo person, who signs in to the dashboard. The key and the password are
// kept in DATA_DIR/demo-credentials.json (mode 0600) so later starts can print them again; that
// file is a local convenience: the event store itself keeps only their hashes.
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { uuidFromName } from '../domain/ids.ts'
import type { Services } from './services.ts'

export interface DemoCredentials {
  accountId: string
  apiKey: string
  /** The demo person's dashboard sign-in (absent in files written before the dashboard). */
  email?: string
  password?: string
}

export const DEMO_EMAIL = 'demo@example.com'

export async function seedDemoAccount(services: Services): Promise<DemoCredentials | null> {
  const file = join(services.config.dataDir, 'demo-credentials.json')
  const accountId = uuidFromName('notes-service', 'demo-account')
  const save = (c: DemoCredentials) => writeFileSync(file, JSON.stringify(c, null, 2) + '\n', { mode: 0o600 })
  if (existsSync(file)) {
    const creds = JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials
    // A data directory from before the dashboard: give the demo account its person now.
    if (!creds.email && !(await services.persons.findPerson(DEMO_EMAIL))) {
      const withPerson = { ...creds, ...(await demoPerson(services, creds.accountId)) }
      save(withPerson)
      return withPerson
    }
    return creds
  }
  // An account without the file: the key was printed before and is not recoverable.
  if (await services.accounts.accountExists(accountId)) return null
  await services.accounts.openAccount({ accountId, name: 'Demo', plan: 'pro' })
  const { apiKey } = await services.accounts.createApiKey(accountId, 'demo')
  const creds = { accountId, apiKey, ...(await demoPerson(services, accountId)) }
  save(creds)
  return creds
}

async function demoPerson(services: Services, accountId: string): Promise<{ email: string; password: string }> {
  const password = randomBytes(12).toString('base64url')
  await services.persons.register({ accountId, email: DEMO_EMAIL, password, name: 'Demo' })
  return { email: DEMO_EMAIL, password }
}
