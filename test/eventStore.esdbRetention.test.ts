// EventStoreDB depth (issue 13, finding 6), stream metadata: API-key usage streams are disposable
// (only the latest use matters), so they carry `$maxCount`/`$maxAge`; stream reads then return
// only the retained window, as EventStoreDB's do (the test server models the documented metadata
// semantics). Before, apikeyusage streams grew forever.
import t from 'tap'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { ApiKeyUsage, USAGE_RETENTION } from '../commands/apiKeyUsage.ts'
import { apiKeyUsageStream } from '../domain/accounts/apiKey.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'

t.test('given a busy API key, when its use is recorded over many intervals, then its usage stream keeps only the retained window', async (t) => {
  const server = await startEsdbTestServer()
  const events = openEsdbEventStore(server.connectionString)
  t.teardown(async () => (await events.close(), await server.stop()))
  let now = Date.parse('2026-11-26T00:00:00Z')
  const errors: string[] = []
  const usage = new ApiKeyUsage(events, 1000, () => new Date(now), (m) => errors.push(m))
  const stream = apiKeyUsageStream.of('key-1')
  const uses = 3 * USAGE_RETENTION.maxCount
  for (let i = 0; i < uses; i++) {
    usage.seen('key-1', 'acc-1')
    now += 1500
    // Recording is fire-and-forget: wait for this use to be stored before the next.
    const deadline = Date.now() + 10_000
    while ((await events.readStream(stream)).currentRevision < i && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  }
  t.same(errors, [])
  const read = await events.readStream(stream)
  t.equal(read.events.length, USAGE_RETENTION.maxCount, `a stream read returns the last ${USAGE_RETENTION.maxCount} uses`)
  t.equal(read.currentRevision, uses - 1)
  t.equal(read.events.at(-1)!.data.at, new Date(now - 1500).toISOString(), 'the latest use is kept')
  // $all keeps them until a scavenge (EventStoreDB removes expired events only then).
  t.equal((await events.readAll({ filter: { categories: ['apikeyusage'] } })).length, uses)
})
