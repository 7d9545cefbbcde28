// The signing secrets every process of a deployment must agree on: the upload URLs' (local blob
// store), the OAuth consent page's, the dashboard's, and the key that seals webhook signing
// secrets in the events. Each comes from its environment variable when set; otherwise from the
// shared key store when the deployment has one (MongoDB: processes on other hosts read the same
// value), else from a file in DATA_DIR (app/secrets.ts: one host).
//
// In the store, the first process to start makes a secret and every later one reads it (an
// insert-if-absent, so two processes starting together agree). A deployment that kept its
// secrets in DATA_DIR before (one host, one shared volume) carries them over: the first process
// that finds the store without a secret and its old file next to it stores the file's value, so
// sessions, upload URLs and webhook secrets sealed before the move stay valid.
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from './config.ts'
import type { Doc, DocumentStore } from '../ports/documentStore.ts'
import { signingSecret } from './secrets.ts'

export type SecretName = 'upload' | 'oauth' | 'dashboard' | 'webhook'

export interface SecretSource {
  secret(name: SecretName): Promise<string>
}

type SecretDoc = Doc & { _id: SecretName; value: string }
export const SIGNING_SECRETS_COLLECTION = 'signing_secrets'

/** The secrets in a document store shared by every process; `legacyDataDir`: where earlier starts kept them as files. */
export function documentSecrets(store: DocumentStore, legacyDataDir: string | null): SecretSource {
  const secrets = store.collection<SecretDoc>(SIGNING_SECRETS_COLLECTION)
  return {
    async secret(name) {
      const found = await secrets.findOne({ _id: name })
      if (found) return found.value
      const legacy = legacyDataDir ? join(legacyDataDir, `${name}-signing.key`) : null
      const value = legacy && existsSync(legacy) ? readFileSync(legacy, 'utf8').trim() : randomBytes(32).toString('base64url')
      await secrets.insertManyIfAbsent([{ _id: name, value }])
      const stored = await secrets.findOne({ _id: name })
      if (!stored) throw new Error(`the signing secret "${name}" could not be stored in the key store`)
      return stored.value
    },
  }
}

/** One host: files in DATA_DIR (mode 0600), as before. */
export const fileSecrets = (dataDir: string): SecretSource => ({ secret: async (name) => signingSecret(dataDir, name, null) })

/** `config` with every signing secret the environment leaves unset taken from `source`. */
export async function withSharedSecrets(config: Config, source: SecretSource): Promise<Config> {
  const pick = async (fromEnv: string | null, name: SecretName) => fromEnv ?? (await source.secret(name))
  return {
    ...config,
    uploadSigningSecret: await pick(config.uploadSigningSecret, 'upload'),
    oauthSigningSecret: await pick(config.oauthSigningSecret, 'oauth'),
    dashboard: { ...config.dashboard, signingSecret: await pick(config.dashboard.signingSecret, 'dashboard') },
    webhooks: { ...config.webhooks, secretKey: await pick(config.webhooks.secretKey, 'webhook') },
  }
}
