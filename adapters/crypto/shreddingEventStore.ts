// Crypto-shredding in front of any event store (SQLite or EventStoreDB): the data of every event
// that carries a note's content is sealed with that note's own key (AES-256-GCM, the stream name
// as associated data) before it reaches the log, and opened again on every read, so deciders,
// projections and workers see plain events. Deleting a note destroys its key
// (ports/contentKeys.ts): from then on its sealed events read back as `ContentShredded` with no
// data at all, which every decider and projection ignores; the log itself is never rewritten,
// so positions, revisions and the credit history (credits streams, never sealed: they carry ids
// and amounts, no content) stay exactly as they were.
//
// What is sealed, under which note's key:
// - `note-<id>` and `analysis-<id>` streams: everything but `NoteDeleted` (which must stay
//   readable, and carries no content), under `<id>`;
// - `deliverable-*`, `ask-*` and `voice-*` events whose data names one `noteId`, under that note
//   (a voice profile created from a speaker name typed in a note, a voiceprint enrolled from its
//   audio: deleting the note shreds the name and the appearance).
// A question over the whole library (`ask`, `noteId: null`) quotes several notes and is not
// sealed; nor are webhook deliveries (title and ids only) — the README says so.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { DomainError } from '../../domain/errors.ts'
import { categoryOf, readLog, type EventStore, type EventToAppend, type RecordedEvent } from '../../ports/eventStore.ts'
import type { ContentKey, ContentKeyStore } from '../../ports/contentKeys.ts'

const STREAM_KEYED = new Set(['note', 'analysis'])
const DATA_KEYED = new Set(['deliverable', 'ask', 'voice'])
const PLAIN_TYPES = new Set(['NoteDeleted'])
/** What a sealed event whose key was destroyed reads as. */
export const SHREDDED_TYPE = 'ContentShredded'

interface Sealed {
  $sealed: 1
  /** The note whose key sealed it. */
  key: string
  iv: string
  tag: string
  ct: string
}

const isSealed = (d: unknown): d is Sealed => !!d && typeof d === 'object' && (d as { $sealed?: unknown }).$sealed === 1

/** The note whose key seals this event, or null when it is stored as it is. */
export function sealingKeyOf(streamName: string, e: Pick<EventToAppend, 'type' | 'data'>): string | null {
  if (PLAIN_TYPES.has(e.type)) return null
  const category = categoryOf(streamName)
  if (STREAM_KEYED.has(category)) return streamName.slice(category.length + 1)
  if (DATA_KEYED.has(category) && typeof e.data.noteId === 'string') return e.data.noteId
  return null
}

export function shreddingEventStore(inner: EventStore, keys: ContentKeyStore, options: { cacheMs?: number } = {}): EventStore & { forget(id: string): void } {
  const cacheMs = options.cacheMs ?? 1000
  const cache = new Map<string, { key: ContentKey; until: number }>()

  async function keyFor(id: string, create: boolean): Promise<ContentKey> {
    const hit = cache.get(id)
    if (!create && hit && hit.until > Date.now()) return hit.key
    const key = await keys.key(id, { create })
    if (cache.size > 10_000) cache.clear()
    cache.set(id, { key, until: Date.now() + cacheMs })
    return key
  }

  async function seal(streamName: string, e: EventToAppend): Promise<EventToAppend> {
    const id = sealingKeyOf(streamName, e)
    if (!id) return e
    // Always asked of the key store, never the cache: a note deleted by another process gets no new content.
    const k = await keyFor(id, true)
    if (k.kind !== 'key') throw new DomainError('not_found', 'No note with that id belongs to you (it was deleted).')
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', k.key, iv)
    cipher.setAAD(Buffer.from(streamName))
    const ct = Buffer.concat([cipher.update(JSON.stringify(e.data), 'utf8'), cipher.final()])
    const sealed: Sealed = { $sealed: 1, key: id, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ct: ct.toString('base64') }
    return { ...e, data: sealed as unknown as Record<string, unknown> }
  }

  async function open(e: RecordedEvent): Promise<RecordedEvent> {
    if (e.type === 'NoteDeleted') cache.delete(noteIdOfStream(e.streamName))
    if (!isSealed(e.data)) return e
    const sealed = e.data
    const k = await keyFor(sealed.key, false)
    if (k.kind !== 'key') return { ...e, type: SHREDDED_TYPE, data: {} }
    const decipher = createDecipheriv('aes-256-gcm', k.key, Buffer.from(sealed.iv, 'base64'))
    decipher.setAAD(Buffer.from(e.streamName))
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'))
    const plain = Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()])
    return { ...e, data: JSON.parse(plain.toString('utf8')) as Record<string, unknown> }
  }

  return {
    async appendToStream(streamName, events, options) {
      const sealed: EventToAppend[] = []
      for (const e of events) sealed.push(await seal(streamName, e))
      return inner.appendToStream(streamName, sealed, options)
    },
    async readStream(streamName, options) {
      const r = await inner.readStream(streamName, options)
      const events: RecordedEvent[] = []
      for (const e of r.events) events.push(await open(e))
      return { ...r, events }
    },
    async readAll(options) {
      const all = await inner.readAll(options)
      const out: RecordedEvent[] = []
      for (const e of all) out.push(await open(e))
      return out
    },
    readAllRaw: (options) => readLog(inner, options),
    subscribeToAll(options) {
      const source = inner.subscribeToAll(options)
      return {
        async *[Symbol.asyncIterator]() {
          for await (const e of source) yield await open(e)
        },
      }
    },
    forget(id: string) {
      cache.delete(id)
    },
    // Optional capabilities pass through, or the composed store would silently lose them.
    ...(inner.setStreamRetention ? { setStreamRetention: inner.setStreamRetention.bind(inner) } : {}),
    ...(inner.deleteStream ? { deleteStream: inner.deleteStream.bind(inner) } : {}),
    close: () => inner.close(),
  }
}

const noteIdOfStream = (streamName: string) => streamName.slice(streamName.indexOf('-') + 1)
