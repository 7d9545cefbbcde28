// Which blob store this process uses: the local directory (default) or an S3-compatible store
// when S3_BUCKET is set (docs/operations.md, "Blob storage").
import type { BlobStore } from '../ports/blobStore.ts'
import { LocalBlobStore, blobDir } from '../adapters/local/blobStore.ts'
import { S3BlobStore, type S3BlobStoreOptions } from '../adapters/s3/blobStore.ts'
import { signingSecret } from './secrets.ts'

/** What the environment configures of the S3 store (the rest of its options are tuning). */
export type S3Config = Pick<S3BlobStoreOptions, 'bucket' | 'region' | 'endpoint' | 'publicEndpoint' | 'forcePathStyle' | 'credentials'>

const bool = (v: string | undefined, fallback: boolean, name: string): boolean => {
  if (v === undefined || v === '') return fallback
  if (/^(1|true|yes)$/i.test(v)) return true
  if (/^(0|false|no)$/i.test(v)) return false
  throw new Error(`${name} must be true or false, got ${JSON.stringify(v)}`)
}

const httpUrl = (v: string | undefined, name: string): string | null => {
  if (!v) return null
  let u: URL
  try {
    u = new URL(v)
  } catch {
    throw new Error(`${name} must be an http(s) URL, got ${JSON.stringify(v)}`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${name} must be an http(s) URL, got ${JSON.stringify(v)}`)
  return v.replace(/\/+$/, '')
}

/**
 * S3_BUCKET selects the S3 adapter; without it the other S3_* variables are not read.
 * S3_ENDPOINT: the S3 API the service talks to, e.g. http://minio:9000 (default: AWS S3).
 * S3_REGION: the region requests are signed for. S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: both or
 * neither (then the AWS default chain: AWS_* variables, shared config, an instance or task role).
 * S3_PUBLIC_ENDPOINT: the endpoint written into presigned upload URLs (default S3_ENDPOINT).
 * S3_FORCE_PATH_STYLE: `<endpoint>/<bucket>/<key>` URLs (MinIO); default on with S3_ENDPOINT.
 */
export function loadS3Config(env: NodeJS.ProcessEnv): S3Config | null {
  const bucket = env.S3_BUCKET?.trim()
  if (!bucket) return null
  const endpoint = httpUrl(env.S3_ENDPOINT, 'S3_ENDPOINT')
  const accessKeyId = env.S3_ACCESS_KEY_ID ?? ''
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY ?? ''
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) throw new Error('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together (or set neither to use the AWS default credentials)')
  return {
    bucket,
    region: env.S3_REGION || 'us-east-1',
    endpoint,
    publicEndpoint: httpUrl(env.S3_PUBLIC_ENDPOINT, 'S3_PUBLIC_ENDPOINT'),
    // Self-hosted stores (MinIO) answer on one host name: path-style unless told otherwise.
    forcePathStyle: bool(env.S3_FORCE_PATH_STYLE, endpoint !== null, 'S3_FORCE_PATH_STYLE'),
    credentials: accessKeyId ? { accessKeyId, secretAccessKey } : null,
  }
}

export interface BlobStores {
  blobs: BlobStore
  /** The local store when this service serves its own presigned upload URLs (PUT /uploads/:id); null with S3. */
  localUploads: LocalBlobStore | null
}

export function createBlobStore(
  config: { dataDir: string; publicBaseUrl: string; uploadSigningSecret: string | null; s3: S3Config | null },
  clock: () => Date,
): BlobStores {
  if (config.s3) return { blobs: new S3BlobStore({ ...config.s3, clock }), localUploads: null }
  const local = new LocalBlobStore({ dir: blobDir(config.dataDir), publicBaseUrl: config.publicBaseUrl, signingSecret: signingSecret(config.dataDir, 'upload', config.uploadSigningSecret), clock })
  return { blobs: local, localUploads: local }
}
