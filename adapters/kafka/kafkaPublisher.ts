// The Kafka adapter of the analytics-publisher port, and a small topic reader for tests and
// tools. This is the only file that imports kafkajs.
//
// Delivery: every publish waits for acks=all. The producer is idempotent (producer id plus
// per-partition sequence numbers), so its own retries of a request never write a message twice,
// and it sends one request at a time per broker, so a key's messages stay in order. When a
// publish still fails (broker down past the retry budget), the producer is thrown away and the
// next publish starts a fresh one: a resent batch then gets new sequence numbers instead of
// reusing ones the broker may already hold for other messages. Messages that were written
// before the failure are written again by the retry: at-least-once, deduplicated downstream.
import { randomUUID } from 'node:crypto'
import { Kafka, logLevel, Partitioners, type Admin, type LogEntry, type Producer, type TopicMessages } from 'kafkajs'
import type { AnalyticsMessage, AnalyticsPublisher } from '../../ports/analyticsPublisher.ts'

export interface KafkaConnectionOptions {
  /** host:port of one or more brokers. */
  brokers: string[]
  clientId: string
  /** Retries of one connect or request before it fails (default 5: about 10 s of trying). */
  retries?: number
  connectionTimeoutMs?: number
  requestTimeoutMs?: number
  /** Where kafkajs' warnings and errors go (default: one line on stderr each). */
  log?: (level: 'error' | 'warn' | 'info' | 'debug', message: string) => void
}

export interface KafkaPublisherOptions extends KafkaConnectionOptions {
  /** Partitions of the topics this publisher creates (default 3). Existing topics are kept as they are. */
  partitions?: number
  /** Replication factor of created topics (default: the broker's default.replication.factor). */
  replicationFactor?: number
  /** Upper bound of one produce request's payload; larger batches go out in several requests, in order. */
  maxRequestBytes?: number
  /**
   * The topic that keeps the forwarder's checkpoints (`checkpoints` of the publisher): one
   * partition, compacted, key = the forwarder's name, value = `{"position":n,"at":…}`. Unset: the
   * publisher keeps none.
   */
  checkpointTopic?: string
}

const LEVEL_NAMES = { [logLevel.ERROR]: 'error', [logLevel.WARN]: 'warn', [logLevel.INFO]: 'info', [logLevel.DEBUG]: 'debug' } as const

// We bound the idempotent producer's retries on purpose (see the header); its warning about
// that is expected.
const EXPECTED_WARNINGS = [/Limiting retries for the idempotent producer/]

function createKafka(options: KafkaConnectionOptions): Kafka {
  const log = options.log ?? ((level, message) => console.error(`[kafkajs] ${level}: ${message}`))
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: { initialRetryTime: 300, maxRetryTime: 5000, retries: options.retries ?? 5 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ namespace, level, log: entry }: LogEntry) => {
        const { message, timestamp: _t, logger: _l, stack: _s, ...extra } = entry
        if (EXPECTED_WARNINGS.some((re) => re.test(message))) return
        const details = Object.keys(extra).length > 0 ? ` ${JSON.stringify(extra)}` : ''
        log(LEVEL_NAMES[level as keyof typeof LEVEL_NAMES] ?? 'info', `${namespace ? namespace + ': ' : ''}${message}${details}`)
      },
  })
}

/**
 * Connects an idempotent producer (acks=all) and an admin client. Rejects when no broker can be
 * reached within the retry budget, so a configured but absent Kafka fails loudly at startup.
 * Topics are created on first use (admin), with `partitions` partitions.
 */
export async function openKafkaPublisher(options: KafkaPublisherOptions): Promise<AnalyticsPublisher> {
  const { partitions = 3, replicationFactor = -1, maxRequestBytes = 512 * 1024 } = options
  const retries = options.retries ?? 5
  const kafka = createKafka(options)
  const admin: Admin = kafka.admin()
  const where = options.brokers.join(',')

  const newProducer = async (): Promise<Producer> => {
    const p = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      // The Java client's partitioner (murmur2 of the key), so Java, Go or Python consumers and
      // producers agree on which partition a stream lives in.
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries },
      allowAutoTopicCreation: true,
    })
    await p.connect()
    return p
  }

  let producer: Producer
  try {
    await admin.connect()
    producer = await newProducer()
  } catch (err) {
    await admin.disconnect().catch(() => {})
    throw new Error(`cannot connect to Kafka at ${where}: ${errorMessage(err)}`, { cause: err })
  }
  let current: Producer | null = producer
  let closed = false

  const knownTopics = new Set<string>()
  const ensureTopics = async (topics: string[]) => {
    let missing = topics.filter((t) => !knownTopics.has(t))
    if (missing.length === 0) return
    const existing = new Set(await admin.listTopics())
    for (const t of missing) if (existing.has(t)) knownTopics.add(t)
    missing = missing.filter((t) => !existing.has(t))
    if (missing.length === 0) return
    // Resolves (false) when another client created them in the meantime.
    await admin.createTopics({
      topics: missing.map((topic) => ({ topic, numPartitions: partitions, replicationFactor })),
      waitForLeaders: true,
    })
    for (const t of missing) knownTopics.add(t)
  }

  const send = async (messages: readonly AnalyticsMessage[]) => {
    await ensureTopics([...new Set(messages.map((m) => m.topic))])
    for (const chunk of chunksByBytes(messages, maxRequestBytes)) {
      // Map keeps first-seen topic order; each topic's messages keep array order.
      const byTopic = new Map<string, TopicMessages>()
      for (const m of chunk) {
        let tm = byTopic.get(m.topic)
        if (!tm) byTopic.set(m.topic, (tm = { topic: m.topic, messages: [] }))
        tm.messages.push({ key: m.key, value: m.value, ...(m.headers ? { headers: { ...m.headers } } : {}) })
      }
      current ??= await newProducer()
      try {
        await current.sendBatch({ topicMessages: [...byTopic.values()], acks: -1 })
      } catch (err) {
        // Start over with a new producer id on the next attempt (see the header).
        const broken = current
        current = null
        await broken.disconnect().catch(() => {})
        throw err
      }
    }
  }

  // Publishes run one after another, so two calls never interleave their messages.
  let queue: Promise<unknown> = Promise.resolve()
  const checkpointTopic = options.checkpointTopic
  const ensureCheckpointTopic = async (topic: string) => {
    if (knownTopics.has(topic)) return
    if (!(await admin.listTopics()).includes(topic)) {
      await admin.createTopics({
        topics: [{ topic, numPartitions: 1, replicationFactor, configEntries: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'segment.ms', value: String(3_600_000) }] }],
        waitForLeaders: true,
      })
    }
    knownTopics.add(topic)
  }
  const publisher: AnalyticsPublisher = {
    publish(messages) {
      if (closed) return Promise.reject(new Error('Kafka publisher is closed'))
      if (messages.length === 0) return Promise.resolve()
      const run = queue.then(
        () => send(messages),
        () => send(messages),
      )
      queue = run.catch(() => {})
      return run.catch((err: unknown) => {
        throw new Error(`Kafka publish of ${messages.length} message(s) to ${where} failed: ${errorMessage(err)}`, { cause: err })
      })
    },
    async close() {
      if (closed) return
      closed = true
      await queue
      await current?.disconnect().catch(() => {})
      current = null
      await admin.disconnect().catch(() => {})
    },
  }
  if (checkpointTopic) {
    publisher.checkpoints = {
      async read(name) {
        await ensureCheckpointTopic(checkpointTopic)
        return readLastCheckpoint(kafka, admin, checkpointTopic, name, options.clientId)
      },
      async save(name, position) {
        await ensureCheckpointTopic(checkpointTopic)
        // Through the publish queue: saved only after every batch handed over before it.
        await publisher.publish([{ topic: checkpointTopic, key: name, value: JSON.stringify({ position, at: new Date().toISOString() }) }])
      },
    }
  }
  return publisher
}

/**
 * The last checkpoint saved under `name`: the newest message with that key among the last
 * CHECKPOINT_SCAN of the topic's one partition (only forwarders write there, one message per
 * batch; compaction keeps the newest per key).
 */
const CHECKPOINT_SCAN = 1000n
async function readLastCheckpoint(kafka: Kafka, admin: Admin, topic: string, name: string, clientId: string, timeoutMs = 30_000): Promise<number | null> {
  const [p] = await admin.fetchTopicOffsets(topic)
  if (!p || BigInt(p.high) <= BigInt(p.low)) return null
  const high = BigInt(p.high)
  const from = high - CHECKPOINT_SCAN > BigInt(p.low) ? high - CHECKPOINT_SCAN : BigInt(p.low)
  const groupId = `${clientId}-checkpoint-reader-${randomUUID()}`
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false })
  let found: number | null = null
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`reading the checkpoint topic ${topic}: not read to its end within ${timeoutMs} ms`)), timeoutMs)
      consumer.on(consumer.events.CRASH, (e) => (clearTimeout(timer), reject(e.payload.error)))
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ message }) => {
            const offset = BigInt(message.offset)
            if (offset < from) return
            if (message.key?.toString() === name && message.value) {
              const position = (JSON.parse(message.value.toString()) as { position?: unknown }).position
              if (typeof position === 'number') found = position
            }
            if (offset + 1n >= high) (clearTimeout(timer), resolve())
          },
        })
        .then(() => consumer.seek({ topic, partition: p.partition, offset: String(from) }))
        .catch((err) => (clearTimeout(timer), reject(err)))
    })
  } finally {
    await consumer.disconnect().catch(() => {})
    await admin.deleteGroups([groupId]).catch(() => {})
  }
  return found
}

function* chunksByBytes(messages: readonly AnalyticsMessage[], maxBytes: number): Generator<AnalyticsMessage[]> {
  let chunk: AnalyticsMessage[] = []
  let bytes = 0
  for (const m of messages) {
    let size = Buffer.byteLength(m.value) + Buffer.byteLength(m.key) + 64
    for (const [k, v] of Object.entries(m.headers ?? {})) size += Buffer.byteLength(k) + Buffer.byteLength(v)
    if (chunk.length > 0 && bytes + size > maxBytes) {
      yield chunk
      chunk = []
      bytes = 0
    }
    chunk.push(m)
    bytes += size
  }
  if (chunk.length > 0) yield chunk
}

const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err))

// ---- reading topics (tests, tools) ----------------------------------------------------------

export interface ConsumedMessage {
  topic: string
  partition: number
  /** Offset within the partition (a decimal string: Kafka offsets are 64-bit). */
  offset: string
  key: string | null
  value: string | null
  headers: Record<string, string>
}

/**
 * Reads every message that is in the topics when it is called, from the beginning, with a
 * throw-away consumer group, and returns them per partition in offset order (partitions in
 * topic, partition order). Rejects after `timeoutMs` or when a topic does not exist.
 */
export async function readKafkaTopics(
  options: KafkaConnectionOptions & { topics: string[]; timeoutMs?: number },
): Promise<ConsumedMessage[]> {
  const { topics, timeoutMs = 30_000 } = options
  const kafka = createKafka(options)
  const admin = kafka.admin()
  await admin.connect()
  // The high watermark of each partition now: read until every partition has reached it.
  const targets = new Map<string, bigint>()
  try {
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        if (BigInt(p.high) > BigInt(p.low)) targets.set(`${topic}/${p.partition}`, BigInt(p.high))
      }
    }
  } finally {
    await admin.disconnect().catch(() => {})
  }
  const byPartition = new Map<string, ConsumedMessage[]>()
  if (targets.size > 0) {
    const consumer = kafka.consumer({ groupId: `${options.clientId}-reader-${randomUUID()}`, allowAutoTopicCreation: false })
    try {
      await consumer.connect()
      await consumer.subscribe({ topics, fromBeginning: true })
      await new Promise<void>((resolve, reject) => {
        const pending = new Set(targets.keys())
        const timer = setTimeout(() => {
          reject(new Error(`reading ${topics.join(', ')}: partitions ${[...pending].join(', ')} not read to their end within ${timeoutMs} ms`))
        }, timeoutMs)
        consumer.on(consumer.events.CRASH, (e) => (clearTimeout(timer), reject(e.payload.error)))
        consumer
          .run({
            autoCommit: false,
            eachMessage: async ({ topic, partition, message }) => {
              const id = `${topic}/${partition}`
              const target = targets.get(id)
              if (target === undefined || BigInt(message.offset) >= target) return
              const headers: Record<string, string> = {}
              for (const [k, v] of Object.entries(message.headers ?? {})) if (v !== undefined) headers[k] = String(v)
              const list = byPartition.get(id) ?? []
              byPartition.set(id, list)
              list.push({ topic, partition, offset: message.offset, key: message.key?.toString() ?? null, value: message.value?.toString() ?? null, headers })
              if (BigInt(message.offset) + 1n >= target) {
                pending.delete(id)
                if (pending.size === 0) (clearTimeout(timer), resolve())
              }
            },
          })
          .catch((err) => (clearTimeout(timer), reject(err)))
      })
    } finally {
      await consumer.disconnect().catch(() => {})
    }
  }
  const order = [...byPartition.keys()].sort((a, b) => {
    const [ta, pa] = [a.slice(0, a.lastIndexOf('/')), Number(a.slice(a.lastIndexOf('/') + 1))]
    const [tb, pb] = [b.slice(0, b.lastIndexOf('/')), Number(b.slice(b.lastIndexOf('/') + 1))]
    return ta === tb ? pa - pb : ta < tb ? -1 : 1
  })
  return order.flatMap((k) => byPartition.get(k)!)
}
