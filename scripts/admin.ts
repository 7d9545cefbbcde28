// Admin commands until the dashboard exists. Same DATA_DIR / ESDB_URL as the service; safe to run
// while it runs (the service sees the new events at once).
//   npm run --silent admin -- create-account --plan <plan> [--name <name>] [--email <email>] [--json]
//   npm run --silent admin -- create-key --account <accountId> [--name <name>] [--json]
//   npm run --silent admin -- revoke-key --account <accountId> --key <keyId>
//   npm run --silent admin -- change-plan --account <accountId> --plan <plan>
import { parseArgs } from 'node:util'
import { loadConfig } from '../app/config.ts'
import { openEventStore } from '../app/infrastructure.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { CreditCommands } from '../commands/credits.ts'
import { AccountCommands } from '../commands/accounts.ts'
import { isPlan, PLANS, type Plan } from '../domain/credits/plans.ts'
import { isDomainError } from '../domain/errors.ts'

const USAGE = `usage:
  admin create-account --plan <${PLANS.join('|')}> [--name <name>] [--email <email>] [--json]
  admin create-key --account <accountId> [--name <name>] [--json]
  admin revoke-key --account <accountId> --key <keyId>
  admin change-plan --account <accountId> --plan <plan>`

function fail(message: string, code = 2): never {
  console.error(message)
  process.exit(code)
}

const [command, ...rest] = process.argv.slice(2)
let values: Record<string, string | boolean | undefined>
try {
  values = parseArgs({
    args: rest,
    options: { plan: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' }, account: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean' } },
  }).values
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`)
}
const plan = (): Plan => {
  const p = values.plan
  if (typeof p !== 'string' || !isPlan(p)) fail(`--plan must be one of ${PLANS.join(', ')}\n${USAGE}`)
  return p
}
const account = (): string => (typeof values.account === 'string' ? values.account : fail(`--account is required\n${USAGE}`))

const events = await openEventStore(loadConfig())
const handler = new CommandHandler(events)
const credits = new CreditCommands(handler)
const accounts = new AccountCommands(handler, credits)
try {
  switch (command) {
    case 'create-account': {
      const { accountId } = await accounts.openAccount({ name: (values.name as string) ?? 'Account', email: (values.email as string) ?? null, plan: plan() })
      const { apiKey, keyId } = await accounts.createApiKey(accountId, 'admin')
      if (values.json) console.log(JSON.stringify({ accountId, apiKey }))
      else console.log(`account ${accountId}\nAPI key (shown once): ${apiKey}\nkey id: ${keyId}`)
      break
    }
    case 'create-key': {
      const id = account()
      if (!(await accounts.accountExists(id))) fail(`no account ${id}`, 1)
      const { apiKey, keyId } = await accounts.createApiKey(id, (values.name as string) ?? 'admin')
      if (values.json) console.log(JSON.stringify({ accountId: id, apiKey, keyId }))
      else console.log(`API key (shown once): ${apiKey}\nkey id: ${keyId}`)
      break
    }
    case 'revoke-key': {
      if (typeof values.key !== 'string') fail(`--key is required\n${USAGE}`)
      await accounts.revokeApiKey(account(), values.key)
      console.log(`revoked ${values.key}`)
      break
    }
    case 'change-plan': {
      await credits.changePlan(account(), plan())
      console.log(`account ${values.account} is now on ${values.plan}`)
      break
    }
    default:
      fail(USAGE)
  }
} catch (err) {
  if (isDomainError(err)) fail(`${err.code}: ${err.message}`, 1)
  throw err
} finally {
  await events.close()
}
