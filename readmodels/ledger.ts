// Queries over the credit ledger read model.
import type { DocumentStore } from '../ports/documentStore.ts'
import { CREDIT_ACCOUNTS, LEDGER_ENTRIES, type CreditAccountDoc, type LedgerEntryDoc } from '../projections/ledger.ts'

export const creditAccount = (docs: DocumentStore, accountId: string) => docs.collection<CreditAccountDoc>(CREDIT_ACCOUNTS).findOne({ _id: accountId })

export const ledgerEntries = (docs: DocumentStore, accountId: string, options: { cycle?: string } = {}) =>
  docs.collection<LedgerEntryDoc>(LEDGER_ENTRIES).find({ accountId, ...(options.cycle ? { cycle: options.cycle } : {}) }, { sort: { revision: 1 } })
