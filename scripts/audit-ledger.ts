// The auditor: rebuilds an account's credit statement from the event store alone, compares it
// with the ledger read model, prints the statement and a verdict. Exit code 0 when they agree,
// 1 on any mismatch, 2 on bad usage.
//   npm run --silent audit-ledger -- <accountId> [--json]
import { loadConfig } from '../app/config.ts'
import { openDocumentStore, openEventStore } from '../app/infrastructure.ts'
import { auditAccountLedger } from '../readmodels/creditAudit.ts'
import { readModelSync } from '../projections/sync.ts'

const args = process.argv.slice(2)
const accountId = args.find((a) => !a.startsWith('--'))
if (!accountId) {
  console.error('usage: npm run --silent audit-ledger -- <accountId> [--json]')
  process.exit(2)
}
const config = loadConfig()
const events = await openEventStore(config)
const docs = await openDocumentStore(config)
try {
  // Another process projects the ledger: give its checkpoint a moment to reach the stream's end.
  const audited = await auditAccountLedger({ events, docs, sync: readModelSync(docs, [], 3000), holdLeaseMs: config.creditHolds.leaseMs }, accountId)
  if (!audited) {
    console.error(`no credit ledger for account ${accountId}`)
    process.exitCode = 1
  } else {
    const { accountId: _, auditedAt: __, ...result } = audited
    if (args.includes('--json')) {
      console.log(JSON.stringify({ accountId, ...result }))
    } else {
      console.log(`Credit statement for account ${accountId}`)
      console.log('rev  at                        type                 operation              delta   balance')
      for (const l of result.statement) {
        console.log(
          `${String(l.revision).padEnd(4)} ${l.at.padEnd(25)} ${l.type.padEnd(20)} ${(l.operation ?? '').padEnd(20)} ${String(l.delta).padStart(7)} ${String(l.balance).padStart(9)}`,
        )
      }
      console.log(`replayed balance: ${result.balance}`)
      for (const p of result.problems) console.log(`MISMATCH: ${p}`)
      console.log(result.ok ? 'VERDICT: OK (read model matches a replay of the ledger)' : `VERDICT: MISMATCH (${result.problems.length} problem(s))`)
    }
    process.exitCode = result.ok ? 0 : 1
  }
} finally {
  await events.close()
  await docs.close()
}
