// Which blob store the configuration selects: S3 when S3_BUCKET is set, the local directory
// otherwise (docs/operations.md, "Blob storage").
import t from 'tap'
import { loadConfig } from '../app/config.ts'
import { createBlobStore } from '../app/blobStore.ts'
import { LocalBlobStore } from '../adapters/local/blobStore.ts'
import { S3BlobStore } from '../adapters/s3/blobStore.ts'
import { tempDir } from './support/tmp.ts'

t.test('without S3_BUCKET the local store serves its own upload URLs; other S3_* variables are not read', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const config = loadConfig({ DATA_DIR: tmp.dir, S3_ENDPOINT: 'http://127.0.0.1:9000' })
  t.equal(config.s3, null)
  const { blobs, localUploads } = createBlobStore(config, () => new Date())
  t.ok(blobs instanceof LocalBlobStore)
  t.equal(localUploads, blobs)
})

t.test('S3_BUCKET selects S3, with path-style URLs by default when an endpoint is given', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const env = { DATA_DIR: tmp.dir, S3_BUCKET: 'notes', S3_ENDPOINT: 'http://minio:9000/', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's', S3_PUBLIC_ENDPOINT: 'http://localhost:9000' }
  const config = loadConfig(env)
  t.same(config.s3, {
    bucket: 'notes',
    region: 'us-east-1',
    endpoint: 'http://minio:9000',
    publicEndpoint: 'http://localhost:9000',
    forcePathStyle: true,
    credentials: { accessKeyId: 'k', secretAccessKey: 's' },
  })
  const { blobs, localUploads } = createBlobStore(config, () => new Date())
  t.ok(blobs instanceof S3BlobStore)
  t.equal(localUploads, null, 'no PUT /uploads/:id with S3')
  ;(blobs as S3BlobStore).close()

  t.same(loadConfig({ DATA_DIR: tmp.dir, S3_BUCKET: 'notes', S3_REGION: 'eu-west-1' }).s3, {
    bucket: 'notes',
    region: 'eu-west-1',
    endpoint: null,
    publicEndpoint: null,
    forcePathStyle: false,
    credentials: null,
  }, 'AWS itself: virtual-hosted URLs and the default credential chain')
  t.equal(loadConfig({ ...env, S3_FORCE_PATH_STYLE: 'false' }).s3?.forcePathStyle, false)
})

t.test('presigned URLs name the public endpoint, where clients reach the store', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const config = loadConfig({ DATA_DIR: tmp.dir, S3_BUCKET: 'notes', S3_ENDPOINT: 'http://minio:9000', S3_PUBLIC_ENDPOINT: 'https://files.example.org', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' })
  const { blobs } = createBlobStore(config, () => new Date('2026-11-22T10:00:00Z'))
  const signed = await blobs.presignPut('uploads/abc', { contentType: 'audio/wav', maxBytes: 100, exactBytes: 100, expiresInSeconds: 600 })
  const u = new URL(signed.url)
  t.equal(`${u.origin}${u.pathname}`, 'https://files.example.org/notes/uploads/abc')
  t.equal(u.searchParams.get('X-Amz-Expires'), '600')
  t.equal(u.searchParams.get('X-Amz-Date'), '20261122T100000Z')
  t.equal(u.searchParams.get('X-Amz-SignedHeaders'), 'content-length;content-type;host', 'type and size are signed')
  t.notOk([...u.searchParams.keys()].some((k) => /checksum/i.test(k)), 'no checksum of an empty body is bound to the URL')
  t.same(signed.expiresAt, new Date('2026-11-22T10:10:00Z'))
  ;(blobs as S3BlobStore).close()
})

t.test('bad S3 settings are refused at start', async (t) => {
  const base = { DATA_DIR: '/tmp/x', S3_BUCKET: 'notes' }
  t.throws(() => loadConfig({ ...base, S3_ACCESS_KEY_ID: 'k' }), /go together/)
  t.throws(() => loadConfig({ ...base, S3_ENDPOINT: 'minio:9000' }), /S3_ENDPOINT must be an http\(s\) URL/)
  t.throws(() => loadConfig({ ...base, S3_FORCE_PATH_STYLE: 'maybe' }), /S3_FORCE_PATH_STYLE/)
})
