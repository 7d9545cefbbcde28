// Queries over the credit ledger read model.
import type { DocumentStore } from '../ports/documentStore.ts'
import { CREDIT_ACCOUNTS, LEDGER_ENTRIES, type CreditAccountDoc, type LedgerEntryDoc } from '../projections/ledger.ts'
import { NOTES, type NoteDoc } from '../projections/notes.ts'
import type { LedgerLine } from '../contract/dashboard.ts'

export const creditAccount = (docs: DocumentStore, accountId: string) => docs.collection<CreditAccountDoc>(CREDIT_ACCOUNTS).findOne({ _id: accountId })

export const ledgerEntries = (docs: DocumentStore, accountId: string, options: { cycle?: string } = {}) =>
  docs.collection<LedgerEntryDoc>(LEDGER_ENTRIES).find({ accountId, ...(options.cycle ? { cycle: options.cycle } : {}) }, { sort: { revision: 1 } })

// ---- the dashboard's statement of a cycle ---------------------------------------------------------


/** Cycles with ledger lines, newest first. */
export async function ledgerCycles(docs: DocumentStore, accountId: string): Promise<string[]> {
  const rows = await docs.collection<LedgerEntryDoc>(LEDGER_ENTRIES).find({ accountId }, { projection: { cycle: 1 } })
  return [...new Set(rows.map((r) => r.cycle).filter((c): c is string => !!c))].sort().reverse()
}

/** The lines of one cycle, oldest first, with the title of the note each is about. */
export async function cycleStatement(docs: DocumentStore, accountId: string, cycle: string): Promise<LedgerLine[]> {
  const entries = await ledgerEntries(docs, accountId, { cycle })
  const noteIds = [...new Set(entries.map((e) => e.noteId).filter((n): n is string => !!n))]
  const notes = noteIds.length ? await docs.collection<NoteDoc>(NOTES).find({ _id: { $in: noteIds }, accountId }, { projection: { title: 1 } }) : []
  const titles = new Map(notes.map((n) => [n._id, n.title]))
  return entries.map((e) => ({
    id: e._id,
    revision: e.revision,
    type: e.type,
    operation: e.operation,
    noteId: e.noteId,
    noteTitle: e.noteId ? (titles.get(e.noteId) ?? null) : null,
    reference: e.reference,
    delta: e.delta,
    balanceAfter: e.balanceAfter,
    at: e.at,
  }))
}

const csvCell = (v: string | number | null) => {
  const s = v === null ? '' : String(v)
  // Quotes for separators and line breaks; a leading =, +, - or @ is neutralised so a spreadsheet never runs it as a formula.
  const safe = /^[=+\-@\t\r]/.test(s) && typeof v === 'string' ? `'${s}` : s
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

/** RFC 4180 CSV of a statement (CRLF line ends, a header row). */
export function statementCsv(lines: LedgerLine[]): string {
  const header = ['at', 'revision', 'type', 'operation', 'note_id', 'note_title', 'reference', 'delta', 'balance_after']
  const rows = lines.map((l) => [l.at, l.revision, l.type, l.operation, l.noteId, l.noteTitle, l.reference, l.delta, l.balanceAfter].map(csvCell).join(','))
  return [header.join(','), ...rows].join('\r\n') + '\r\n'
}
