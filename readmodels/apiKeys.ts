// The key list of an account (the dashboard's key page): prefix, name, status, last use.
import type { DocumentStore } from '../ports/documentStore.ts'
import { API_KEYS, type ApiKeyDoc } from '../projections/apiKeys.ts'
import type { ApiKeyList } from '../contract/dashboard.ts'

export async function listApiKeys(docs: DocumentStore, accountId: string): Promise<ApiKeyList> {
  const keys = await docs.collection<ApiKeyDoc>(API_KEYS).find({ accountId }, { sort: { createdAt: -1 } })
  return {
    keys: keys.map((k) => ({ id: k._id, name: k.name, prefix: k.prefix, status: k.status, createdAt: k.createdAt, revokedAt: k.revokedAt, lastUsedAt: k.lastUsedAt ?? null })),
  }
}
