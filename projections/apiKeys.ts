// The API keys read model: what a key list shows (never the secret, nor its hash), with the
// key's last use from its usage stream (throttled `ApiKeyUsed` events, commands/apiKeyUsage.ts).
import type { ApiKeyEvent, ApiKeyUsed } from '../domain/accounts/apiKey.ts'
import type { Projection } from './runner.ts'
import { toDomainEvent } from '../ports/eventStore.ts'
import { replaceRead, updateRead } from './revisionGuard.ts'

export const API_KEYS = 'api_keys'

export interface ApiKeyDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  name: string
  prefix: string
  status: 'active' | 'revoked'
  createdAt: string
  revokedAt: string | null
  /** Latest recorded use (to within the recording interval), null when never used. */
  lastUsedAt?: string | null
  revision: number
}

export const apiKeysProjection: Projection = {
  name: 'api-keys',
  filter: { categories: ['apikey', 'apikeyusage'] },
  collections: [API_KEYS],
  async setup(docs) {
    await docs.collection(API_KEYS).createIndex({ keys: { accountId: 1, createdAt: -1 }, name: 'by_account' })
  },
  async handle(events, docs) {
    const keys = docs.collection<ApiKeyDoc>(API_KEYS)
    for (const recorded of events) {
      if (recorded.type === 'ApiKeyUsed') {
        // $max: applying a use twice, or an older one late, changes nothing.
        const u = recorded.data as ApiKeyUsed['data']
        await keys.updateOne({ _id: u.keyId }, { $max: { lastUsedAt: u.at } })
        continue
      }
      const e = toDomainEvent<ApiKeyEvent>(recorded)
      const doc = await keys.findOne({ _id: e.data.keyId })
      if (doc && doc.revision >= recorded.revision) continue
      if (e.type === 'ApiKeyCreated') {
        const d = e.data
        // Guarded by the revision read (projections/revisionGuard.ts): a late creation never
        // reactivates a key another instance has revoked meanwhile.
        await replaceRead(keys, doc, {
          _id: d.keyId,
          accountId: d.accountId,
          name: d.name,
          prefix: d.prefix,
          status: 'active',
          createdAt: d.at,
          revokedAt: null,
          lastUsedAt: doc?.lastUsedAt ?? null,
          revision: recorded.revision,
        })
      } else if (doc) {
        await updateRead(keys, doc, { $set: { status: 'revoked', revokedAt: e.data.at, revision: recorded.revision } })
      }
    }
  },
}
