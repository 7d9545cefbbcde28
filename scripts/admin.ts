// Admin commands: accounts, keys, plans, and the people who sign in to the dashboard. Same
// DATA_DIR / ESDB_URL as the service; safe to run while it runs (the service sees the new events
// at once). A password not given is generated and printed once.
//   npm run --silent admin -- create-account --plan <plan> [--name <name>] [--email <email> [--password <pw>]] [--json]
//   npm run --silent admin -- add-person --account <accountId> --email <email> [--password <pw>] [--name <name>] [--json]
//   npm run --silent admin -- set-password --email <email> [--password <pw>]
//   npm run --silent admin -- create-key --account <accountId> [--name <name>] [--json]
//   npm run --silent admin -- revoke-key --account <accountId> --key <keyId>   (also revokes the OAuth grants the key approved)
//   npm run --silent admin -- list-grants --account <accountId> [--json]
//   npm run --silent admin -- revoke-grant --account <accountId> --grant <grantId>
//   npm run --silent admin -- change-plan --account <accountId> --plan <plan>
import './checkNode.ts'
import { parseArgs } from 'node:util'
import { loadConfig } from '../app/config.ts'
import { openEventStore } from '../app/infrastructure.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { CreditCommands } from '../commands/credits.ts'
import { AccountCommands } from '../commands/accounts.ts'
import { PersonCommands } from '../commands/persons.ts'
import { OAuthGrants } from '../commands/oauthGrants.ts'
import { randomBytes } from 'node:crypto'
import { checkPasswordPolicy } from '../domain/accounts/password.ts'
import { isEmail } from '../domain/accounts/person.ts'
import { isPlan, PLANS, type Plan } from '../domain/credits/plans.ts'
import { isDomainError } from '../domain/errors.ts'

const USAGE = `usage:
  admin create-account --plan <${PLANS.join('|')}> [--name <name>] [--email <email> [--password <pw>]] [--json]
  admin add-person --account <accountId> --email <email> [--password <pw>] [--name <name>] [--json]
  admin set-password --email <email> [--password <pw>]
  admin create-key --account <accountId> [--name <name>] [--json]
  admin revoke-key --account <accountId> --key <keyId>
  admin list-grants --account <accountId> [--json]
  admin revoke-grant --account <accountId> --grant <grantId>
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
    options: {
      plan: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      account: { type: 'string' },
      key: { type: 'string' },
      grant: { type: 'string' },
      json: { type: 'boolean' },
    },
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
const grants = new OAuthGrants(events, handler)
const accounts = new AccountCommands(handler, credits, grants)
const persons = new PersonCommands(handler, credits, { sessionSeconds: 0 })
/** The password given, or a new random one (then printed once). */
const password = () => (typeof values.password === 'string' ? { password: values.password, generated: false } : { password: randomBytes(12).toString('base64url'), generated: true })
const email = (): string => (typeof values.email === 'string' ? values.email : fail(`--email is required\n${USAGE}`))
try {
  switch (command) {
    case 'create-account': {
      const p = plan()
      const pw = typeof values.email === 'string' ? password() : null
      if (pw) {
        // Refused before anything is written, so a failure leaves no account without its person.
        checkPasswordPolicy(pw.password)
        if (!isEmail(email())) fail(`--email is not an email address`, 1)
        if (await persons.findPerson(email())) fail(`a person with the email ${email()} is already registered`, 1)
      }
      const { accountId } = await accounts.openAccount({ name: (values.name as string) ?? 'Account', email: (values.email as string) ?? null, plan: p })
      const person = pw ? await persons.register({ accountId, email: email(), password: pw.password, name: values.name as string | undefined }) : null
      const { apiKey, keyId } = await accounts.createApiKey(accountId, 'admin')
      if (values.json) console.log(JSON.stringify({ accountId, apiKey, ...(person ? { email: person.email, ...(pw!.generated ? { password: pw!.password } : {}) } : {}) }))
      else {
        console.log(`account ${accountId}\nAPI key (shown once): ${apiKey}\nkey id: ${keyId}`)
        if (person) console.log(`dashboard sign-in: ${person.email}${pw!.generated ? ` / password (shown once): ${pw!.password}` : ' (with the password given)'}`)
      }
      break
    }
    case 'add-person': {
      const pw = password()
      const person = await persons.register({ accountId: account(), email: email(), password: pw.password, name: values.name as string | undefined })
      if (values.json) console.log(JSON.stringify({ accountId: person.accountId, personId: person.personId, email: person.email, ...(pw.generated ? { password: pw.password } : {}) }))
      else console.log(`dashboard sign-in: ${person.email}${pw.generated ? ` / password (shown once): ${pw.password}` : ' (with the password given)'}`)
      break
    }
    case 'set-password': {
      const pw = password()
      const person = await persons.setPassword(email(), pw.password)
      console.log(`password of ${person.email} changed${pw.generated ? `; new password (shown once): ${pw.password}` : ''}; every session signed in with the old one has ended`)
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
      const { grantsRevoked } = await accounts.revokeApiKey(account(), values.key)
      console.log(`revoked ${values.key}; ${grantsRevoked} OAuth grant(s) it approved revoked`)
      break
    }
    case 'list-grants': {
      const list = await grants.list(account())
      if (values.json) console.log(JSON.stringify({ grants: list }))
      else if (list.length === 0) console.log('no OAuth grants')
      else {
        for (const g of list) {
          const by = g.approvedBy ? (g.approvedBy.kind === 'api_key' ? `API key ${g.approvedBy.keyId}` : `person ${g.approvedBy.personId}`) : 'unrecorded'
          console.log(`${g.grantId}  ${g.status}${g.revokedReason ? ` (${g.revokedReason})` : ''}  client ${g.clientName ?? g.clientId}  approved by ${by} at ${g.grantedAt}  ends ${g.expiresAt}`)
        }
      }
      break
    }
    case 'revoke-grant': {
      if (typeof values.grant !== 'string') fail(`--grant is required\n${USAGE}`)
      if (!(await grants.revoke(account(), values.grant, 'revoked_by_admin'))) fail(`no active grant ${values.grant} of account ${values.account}`, 1)
      console.log(`revoked grant ${values.grant}: its tokens stop working now`)
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
