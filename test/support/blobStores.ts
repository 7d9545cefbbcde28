// Both blob stores for the tests: the local one behind a service that really listens (its
// presigned URLs are served by the upload route), and S3 on the server `npm test` starts
// (scripts/servers/minio.sh prints S3_ENDPOINT; the credentials are that script's test values).
import { readdir } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { LocalBlobStore, blobDir } from '../../adapters/local/blobStore.ts'
import { S3BlobStore, uniqueBucketName } from '../../adapters/s3/blobStore.ts'
import { signingSecret } from '../../app/secrets.ts'
import { uploadKey } from '../../commands/notes.ts'
import type { BlobStoreHarness } from '../conformance/blobStore.suite.ts'
import { testService, type TestService, type TestServiceOptions } from './service.ts'
import { freePort } from './ports.ts'

export interface S3TestServer {
  endpoint: string
  accessKeyId: string
  secretAccessKey: string
  region: string
}

/** The S3 server of the test run, or null when S3_ENDPOINT is not set. */
export function s3TestServer(): S3TestServer | null {
  const endpoint = process.env.S3_ENDPOINT
  if (!endpoint) return null
  return {
    endpoint,
    accessKeyId: process.env.S3_ACCESS_KEY_ID || 'notes-test',
    secretAccessKey: process.env.S3_SECRET_ACCESS_KEY || 'notes-test-secret',
    region: process.env.S3_REGION || 'us-east-1',
  }
}

export const S3_NOT_SET =
  'S3 suite not run: it needs S3_ENDPOINT (e.g. http://127.0.0.1:19095). Run it via `npm test`, which starts MinIO, ' +
  'or: eval "$(bash scripts/servers/minio.sh start)" && S3_ENDPOINT=$S3_ENDPOINT npx tap <file>'

/** A fresh bucket on the test server, with a store on it and a way to remove it all. */
export async function s3Bucket(server: S3TestServer, options: { clock?: () => Date; partSizeBytes?: number } = {}) {
  const bucket = uniqueBucketName()
  const open = (clock?: () => Date) =>
    new S3BlobStore({
      bucket,
      region: server.region,
      endpoint: server.endpoint,
      publicEndpoint: null,
      forcePathStyle: true,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      ...(options.partSizeBytes ? { partSizeBytes: options.partSizeBytes } : {}),
      ...(clock ?? options.clock ? { clock: clock ?? options.clock } : {}),
    })
  const store = open()
  await store.ensureBucket()
  const opened = [store]
  return {
    bucket,
    store,
    /** The service's S3_* variables for this bucket. */
    env: {
      S3_BUCKET: bucket,
      S3_ENDPOINT: server.endpoint,
      S3_REGION: server.region,
      S3_ACCESS_KEY_ID: server.accessKeyId,
      S3_SECRET_ACCESS_KEY: server.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    },
    at(clock: () => Date) {
      const s = open(clock)
      opened.push(s)
      return s
    },
    async destroy() {
      await store.destroyBucket()
      for (const s of opened) s.close()
    },
  }
}

/** A whole test service listening on 127.0.0.1, so presigned URLs can be used over real HTTP. */
export async function listeningService(options: TestServiceOptions = {}): Promise<TestService & { baseUrl: string }> {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const s = await testService({ ...options, env: { PUBLIC_BASE_URL: baseUrl, ...options.env } })
  await s.app.listen({ port, host: '127.0.0.1' })
  return Object.assign(s, { baseUrl })
}

/** The local store behind a listening service: its presignable keys are upload slots of real notes. */
export async function localHarness(): Promise<BlobStoreHarness> {
  const s = await listeningService()
  const a = await s.account('pro')
  const secret = signingSecret(s.config.dataDir, 'upload', s.config.uploadSigningSecret)
  return {
    store: s.services.blobs,
    at: (clock) => new LocalBlobStore({ dir: blobDir(s.config.dataDir), publicBaseUrl: s.config.publicBaseUrl, signingSecret: secret, clock }),
    async uploadKeys(n) {
      const keys: string[] = []
      for (let i = 0; i < n; i++) {
        const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ filename: 'x.wav', contentType: 'audio/wav' }) })
        if (r.statusCode !== 202) throw new Error(`could not open an upload slot: ${r.statusCode} ${r.body}`)
        keys.push(uploadKey(r.json().noteId))
      }
      return keys
    },
    async leftovers(key) {
      const path = join(blobDir(s.config.dataDir), key)
      const names = await readdir(dirname(path)).catch(() => [] as string[])
      return names.filter((f) => f.startsWith(`${basename(path)}.`) && f.includes('.partial'))
    },
    cleanup: () => s.close(),
  }
}

/** S3 on a fresh bucket; parts of 5 MiB (S3's smallest) so the suite's bodies go multipart. */
export async function s3Harness(server: S3TestServer): Promise<BlobStoreHarness> {
  const b = await s3Bucket(server, { partSizeBytes: 5 * 1024 * 1024 })
  let n = 0
  return {
    store: b.store,
    at: (clock) => b.at(clock),
    uploadKeys: async (count) => Array.from({ length: count }, () => `presigned/${++n}/upload.bin`),
    leftovers: (key) => b.store.incompleteUploads(key),
    cleanup: () => b.destroy(),
  }
}
