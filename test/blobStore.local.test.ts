// The BlobStore conformance suite against the local directory store, its presigned URLs served by
// this service's upload route over real HTTP.
import t from 'tap'
import { blobStoreConformance } from './conformance/blobStore.suite.ts'
import { localHarness } from './support/blobStores.ts'

blobStoreConformance(t, 'local directory', localHarness)
