// The auditor: rebuilds an account's credit statement from the event store alone, checks the
// ledger's invariants and its hash chain (domain/credits/invariants.ts), compares the statement
// with the ledger read model, prints it and a verdict. Exit code 0 when all holds, 1 on any
// violation or mismatch, 2 on bad usage.
//   npm run --silent audit-ledger -- <accountId> [--json] [--anchor <revision>:<sha256>]...
//   npm run --silent audit-ledger -- --all [--json]        every account with a credit ledger
//   npm run --silent audit-ledger -- <accountId>|--all --csv   the double-entry postings as CSV
// Each violation is one line: `VIOLATION <rule> stream=<stream> revision=<n>: <why>`. The last
// line before the verdict is the head of the hash chain, `HEAD <stream> r<n> <sha256>`: what an
// operator anchors outside the system (docs/credits.md, "Anchoring the ledger") and passes back as
// `--anchor` to prove that nothing up to it was rewritten since.
import { loadConfig } from '../app/config.ts'
import { openDocumentStore, openEventStore } from '../app/infrastructure.ts'
import { auditAccountLedger } from '../readmodels/creditAudit.ts'
import { readModelSync } from '../projections/sync.ts'
import { violationLine } from '../domain/credits/invariants.ts'
import { parseAnchor, type Anchor } from '../domain/credits/chain.ts'
import { creditsStream } from '../domain/credits/ledger.ts'
import { START, toDomainEvent } from '../ports/eventStore.ts'
import { doubleEntry, doubleEntryCsv } from '../domain/credits/doubleEntry.ts'
import type { CreditEvent } from '../domain/credits/ledger.ts'

const args = process.argv.slice(2)
const usage = () => {
  console.error('usage: npm run --silent audit-ledger -- <accountId>|--all [--json|--csv] [--anchor <revision>:<sha256>]...')
  process.exit(2)
}
const anchors: Anchor[] = []
const positional: string[] = []
for (let i = 0; i < args.length; i++) {
  const a = args[i]!
  if (a === '--anchor') {
    const anchor = parseAnchor(args[++i] ?? '')
    if (!anchor) usage()
    anchors.push(anchor!)
  } else if (!a.startsWith('--')) positional.push(a)
}
const all = args.includes('--all')
const json = args.includes('--json')
const csv = args.includes('--csv')
if (!all && positional.length !== 1) usage()

const config = loadConfig()
const events = await openEventStore(config)
const docs = await openDocumentStore(config)
try {
  let accounts = positional
  if (all) {
    const seen = new Set<string>()
    for (let after = START; ; ) {
      const batch = await events.readAll({ after, maxCount: 5000, filter: { categories: ['credits'] } })
      if (batch.length === 0) break
      for (const e of batch) seen.add(creditsStream.idOf(e.streamName))
      after = batch.at(-1)!.globalPosition
    }
    accounts = [...seen].sort()
  }
  let failed = false
  for (const accountId of accounts) {
    // Another process projects the ledger: give its checkpoint a moment to reach the stream's end.
    const audited = await auditAccountLedger({ events, docs, sync: readModelSync(docs, [], { timeoutMs: 3000 }), holdLeaseMs: config.creditHolds.leaseMs }, accountId, all ? [] : anchors)
    if (!audited) {
      console.error(`no credit ledger for account ${accountId}`)
      failed = true
      continue
    }
    const { accountId: _, auditedAt: __, ...result } = audited
    if (!result.ok) failed = true
    if (csv) {
      const read = await events.readStream(creditsStream.of(accountId))
      const statement = doubleEntry(read.events.map((e) => ({ revision: e.revision, event: toDomainEvent<CreditEvent>(e) })))
      const text = doubleEntryCsv(creditsStream.of(accountId), statement)
      process.stdout.write(accounts.indexOf(accountId) === 0 ? text : text.slice(text.indexOf('\n') + 1))
      continue
    }
    if (json) {
      console.log(JSON.stringify({ accountId, stream: creditsStream.of(accountId), ...result }))
      continue
    }
    console.log(`Credit statement for account ${accountId}`)
    console.log('rev  at                        type                 operation              delta   balance')
    for (const l of result.statement) {
      console.log(
        `${String(l.revision).padEnd(4)} ${l.at.padEnd(25)} ${l.type.padEnd(20)} ${(l.operation ?? '').padEnd(20)} ${String(l.delta).padStart(7)} ${String(l.balance).padStart(9)}`,
      )
    }
    console.log(`replayed balance: ${result.balance}`)
    console.log(`double entry: ${result.doubleEntry.totals.map((t) => `${t.account} ${t.amount}`).join(', ')}; sum ${result.doubleEntry.sum}`)
    for (const v of result.violations) console.log(violationLine(v))
    for (const p of result.problems.filter((p) => !p.startsWith('VIOLATION '))) console.log(`MISMATCH: ${p}`)
    const head = result.chain.head
    console.log(head ? `HEAD ${creditsStream.of(accountId)} r${head.revision} ${head.hash} (chain from r${result.chain.startsAt})` : `HEAD ${creditsStream.of(accountId)} none (no hashed event)`)
    console.log(
      result.ok
        ? 'VERDICT: OK (invariants and hash chain hold; read model matches a replay of the ledger)'
        : `VERDICT: ${result.violations.length ? 'VIOLATION' : 'MISMATCH'} (${result.problems.length} problem(s))`,
    )
  }
  process.exitCode = failed ? 1 : 0
} finally {
  await events.close()
  await docs.close()
}
