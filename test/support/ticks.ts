// The smallest projection the event-store and supervision suites run: `Ticked` events in `tick-*`
// streams, one document per event keyed by its id, so a re-applied event changes nothing and a
// count of documents says how many distinct events arrived.
import { randomUUID } from 'node:crypto'
import type { Projection } from '../../projections/runner.ts'

export const ticked = (n: number) => ({ id: randomUUID(), type: 'Ticked', data: { n } })

export const seenProjection: Projection = {
  name: 'seen',
  filter: { categories: ['tick'] },
  collections: ['seen'],
  async handle(events, docs) {
    for (const e of events) await docs.collection('seen').updateOne({ _id: e.id }, { $set: { n: e.data.n } }, { upsert: true })
  },
}
