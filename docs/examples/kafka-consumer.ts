// Follows the service's analytics topics and handles each event once. Delivery is at-least-once,
// so a message can come again (same `event-id` header) after a forwarder crash: skip those.
//   KAFKA_BROKERS=localhost:9094 TOPICS=note,credits npx tsx docs/examples/kafka-consumer.ts
import { Kafka, logLevel } from 'kafkajs'

const env = process.env
const brokers = (env.KAFKA_BROKERS ?? 'localhost:9094').split(',')
const topics = (env.TOPICS ?? 'note,credits').split(',').map((category) => (env.KAFKA_TOPIC_PREFIX ?? 'notes.events.') + category)
// In production keep the ids seen in your own store, written together with what you do per event.
const seen = new Set<string>()

const consumer = new Kafka({ clientId: 'notes-consumer', brokers, logLevel: logLevel.ERROR }).consumer({ groupId: env.GROUP_ID ?? 'notes-consumer' })
await consumer.connect()
await consumer.subscribe({ topics, fromBeginning: true })
await consumer.run({
  eachMessage: async ({ message }) => {
    const eventId = message.headers?.['event-id']?.toString()
    if (!eventId || seen.has(eventId)) return
    seen.add(eventId)
    const event = JSON.parse(message.value!.toString())
    console.log(JSON.stringify({ eventId, type: event.type, stream: event.stream, revision: event.revision, data: event.data }))
  },
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void consumer.disconnect().then(() => process.exit(0)))
