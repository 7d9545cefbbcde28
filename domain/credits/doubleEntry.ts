// The ledger as double entry: each balance-changing event becomes a journal entry whose postings
// sum to zero, over these accounts (a positive amount is a debit, a negative one a credit):
//   balance             the credits the account can spend
//   held                credits held by open reservations
//   grants              where each cycle's plan credits come from
//   expiry              credits left at the end of a cycle, gone
//   plan-changes        what a change of plan added or took away
//   spending:<operation> what each operation cost
//   refunds             what refunds gave back
// So the statement of all accounts sums to zero, `balance` ends at the replayed balance and
// `held` at the credits still held.
import { balanceDelta, entryReference, type CreditEvent } from './ledger.ts'

export interface Posting {
  revision: number
  at: string
  type: CreditEvent['type']
  /** The charge, reservation, refund or cycle the entry is about. */
  reference: string | null
  account: string
  amount: number
}

export interface DoubleEntryStatement {
  postings: Posting[]
  /** Sum per account, accounts sorted by name. */
  totals: { account: string; amount: number }[]
  /** Sum of every posting: 0 for a balanced ledger. */
  sum: number
  /** Revisions whose postings do not sum to zero (empty for a balanced ledger). */
  unbalanced: number[]
}

function legs(e: CreditEvent, balanceBefore: number): [string, number][] {
  switch (e.type) {
    case 'CreditCycleStarted':
      return [
        ['balance', -e.data.expired],
        ['expiry', e.data.expired],
        ['balance', e.data.granted],
        ['grants', -e.data.granted],
      ]
    case 'CreditPlanChanged': {
      const d = balanceDelta(e, balanceBefore)
      return [
        ['balance', d],
        ['plan-changes', -d],
      ]
    }
    case 'CreditsCharged':
      return [
        ['balance', -e.data.cost],
        [`spending:${e.data.operation}`, e.data.cost],
      ]
    case 'CreditsReserved':
      return [
        ['balance', -e.data.amount],
        ['held', e.data.amount],
      ]
    case 'CreditsHoldExtended':
      return [
        ['balance', -e.data.by],
        ['held', e.data.by],
      ]
    case 'CreditsCaptured':
      return [
        ['held', -e.data.reserved],
        ['balance', e.data.reserved - e.data.cost],
        [`spending:${e.data.operation}`, e.data.cost],
      ]
    case 'CreditsReleased':
      return [
        ['held', -e.data.amount],
        ['balance', e.data.amount],
      ]
    case 'CreditsRefunded':
      return [
        ['balance', e.data.amount],
        ['refunds', -e.data.amount],
      ]
    default:
      return []
  }
}

/** The entry's reference; a cycle's grant and expiry name their cycle. */
const referenceOf = (e: CreditEvent): string | null => (e.type === 'CreditCycleStarted' ? e.data.cycle : entryReference(e))

export function doubleEntry(events: readonly { revision: number; event: CreditEvent }[]): DoubleEntryStatement {
  const postings: Posting[] = []
  const unbalanced: number[] = []
  let balance = 0
  for (const { revision, event } of events) {
    const entry = legs(event, balance).filter(([, amount]) => amount !== 0)
    if (entry.reduce((s, [, a]) => s + a, 0) !== 0) unbalanced.push(revision)
    const reference = referenceOf(event)
    for (const [account, amount] of entry) postings.push({ revision, at: event.data.at, type: event.type, reference, account, amount })
    balance += balanceDelta(event, balance)
  }
  const byAccount = new Map<string, number>()
  for (const p of postings) byAccount.set(p.account, (byAccount.get(p.account) ?? 0) + p.amount)
  const totals = [...byAccount].sort(([a], [b]) => (a < b ? -1 : 1)).map(([account, amount]) => ({ account, amount }))
  return { postings, totals, sum: totals.reduce((s, t) => s + t.amount, 0), unbalanced }
}

const csvField = (v: string | number | null) => {
  const s = v === null ? '' : String(v)
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/** The postings as CSV (one line per posting), then one `total` line per account. */
export function doubleEntryCsv(stream: string, s: DoubleEntryStatement): string {
  const lines = ['stream,revision,at,type,reference,account,debit,credit']
  for (const p of s.postings) {
    lines.push([stream, p.revision, p.at, p.type, p.reference, p.account, p.amount > 0 ? p.amount : '', p.amount < 0 ? -p.amount : ''].map(csvField).join(','))
  }
  for (const t of s.totals) lines.push([stream, '', '', 'total', '', t.account, t.amount > 0 ? t.amount : '', t.amount < 0 ? -t.amount : ''].map(csvField).join(','))
  return lines.join('\n') + '\n'
}
