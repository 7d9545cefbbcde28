// GET /readyz, answered from this process's parts and the stores its roles use, each asked with
// a deadline so a failure names its dependency: the event store (a one-event read), the
// read-model store (its checkpoints), the blob store (a stat of a key nobody writes), Kafka (the
// forwarder's publisher state). Then each read model the roles depend on (api and workers read
// every one; a projections process its own loops): its checkpoint, how far it trails the log,
// whether the checkpoint is there at all (a lost read-model store loses it) and how long it has
// not moved while events wait. Not ready, with a reason naming the part, when any of them fails
// the thresholds of docs/health-and-recovery.md.
import { readLog, type EventFilter, type EventStore, type GlobalPosition } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { SpeechEngine } from '../ports/speechEngine.ts'
import type { ContentKeyStore } from '../ports/contentKeys.ts'
import type { DependencyCheck, ProjectionReadiness, Readiness } from '../commands/application.ts'
import { CHECKPOINTS, type RunningProjection } from '../projections/runner.ts'
import type { ResilientPublisher } from '../projections/analyticsForwarder.ts'
import { READ_MODEL_PROJECTIONS } from './projections.ts'

/** Events counted behind a projection at most (the count is one read of the log). */
export const LAG_CAP = 1000
const STORE_DEADLINE_MS = 2000
/** An id no note has: its key lookup answers "none" when the content-key store is up. */
const KEY_PROBE_ID = 'health-readiness-probe'
/** A key no code writes: its stat answers "not there" when the blob store is up. */
const BLOB_PROBE_KEY = 'health/readiness-probe'

export interface ReadinessThresholds {
  /** READY_MAX_LAG */
  maxLag: number
  /** READY_STALL_SECONDS */
  stallSeconds: number
  /** FORWARDER_MAX_DOWN_SECONDS */
  forwarderMaxDownSeconds: number
}

export const DEFAULT_THRESHOLDS: ReadinessThresholds = { maxLag: 500, stallSeconds: 30, forwarderMaxDownSeconds: 60 }

export interface ReadinessDeps {
  events: EventStore
  docs: DocumentStore
  blobs?: BlobStore
  /**
   * The notes' content keys (MongoDB at scale, its own client and database): every role opens
   * events with them, so a key store that does not answer stalls every loop while the log and the
   * read models look fine.
   */
  keys?: ContentKeyStore
  /** The loops this process runs (read-model projections, and the forwarder when `forwarder` names it). */
  projections: RunningProjection[]
  forwarder?: { running: RunningProjection; publisher: ResilientPublisher } | null
  engine: SpeechEngine
  /** Default: every role. */
  roles?: ReadonlySet<string>
  thresholds?: ReadinessThresholds
  /** The read-model store holds the forwarder's lease (MongoDB): then the forwarder depends on it too. */
  forwarderLeaseInReadModels?: boolean
}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer))
}

async function check<T>(ask: () => Promise<T>): Promise<{ check: DependencyCheck; value: T | null }> {
  const started = performance.now()
  try {
    const value = await withDeadline(ask(), STORE_DEADLINE_MS)
    return { check: { reachable: true, latencyMs: Math.round(performance.now() - started), error: null }, value }
  } catch (err) {
    return { check: { reachable: false, latencyMs: null, error: err instanceof Error ? err.message : String(err) }, value: null }
  }
}

type CheckpointDoc = { _id: string; position: GlobalPosition; updatedAt?: string }

export function readinessOf(deps: ReadinessDeps): () => Promise<Readiness> {
  const roles = deps.roles ?? new Set(['api', 'projections', 'workers', 'forwarder'])
  const t = deps.thresholds ?? DEFAULT_THRESHOLDS
  const cap = Math.max(LAG_CAP, t.maxLag + 1)
  const forwarderName = deps.forwarder?.running.name
  const local = deps.projections.filter((p) => p.name !== forwarderName)
  const filters = new Map(READ_MODEL_PROJECTIONS.map((p) => [p.name, p.filter]))
  const readsModels = roles.has('api') || roles.has('workers')
  const usesDocs = readsModels || roles.has('projections') || (!!deps.forwarder && !!deps.forwarderLeaseInReadModels)
  const usesBlobs = !!deps.blobs && (roles.has('api') || roles.has('workers'))
  // What this process's roles read or write: every read model for api and workers, else its own loops.
  const names = [...new Set([...(readsModels ? READ_MODEL_PROJECTIONS.map((p) => p.name) : []), ...local.map((p) => p.name)])]

  // The forwarder's position and since when readiness has seen it there with events waiting.
  let forwarderSeen = { position: Number.NaN, waiting: false, at: 0 }

  return async () => {
    const now = Date.now()
    const [ev, rm, bl, ks] = await Promise.all([
      // The log itself (readLog): opening events would ask the key store and the blob store too,
      // and blame the event store for them.
      check(() => readLog(deps.events, { maxCount: 1 })),
      usesDocs ? check(() => deps.docs.collection<CheckpointDoc>(CHECKPOINTS).find({})) : null,
      usesBlobs ? check(() => deps.blobs!.stat(BLOB_PROBE_KEY)) : null,
      deps.keys ? check(() => deps.keys!.key(KEY_PROBE_ID, { create: false })) : null,
    ])
    const reasons: string[] = []
    if (!ev.check.reachable) reasons.push(`event store: does not answer (${ev.check.error})`)
    if (rm && !rm.check.reachable) reasons.push(`read-model store: does not answer (${rm.check.error})`)
    if (bl && !bl.check.reachable) reasons.push(`blob store: does not answer (${bl.check.error})`)
    if (ks && !ks.check.reachable) reasons.push(`content-key store: does not answer (${ks.check.error})`)
    const checkpoints = new Map((rm?.value ?? []).map((c) => [c._id, c]))

    const lag = async (position: GlobalPosition, filter: EventFilter | undefined): Promise<number | null> => {
      if (!ev.check.reachable) return null
      try {
        // Counted in the log itself: opening each event asked the key store once per note, one
        // round trip after another, and past the deadline a dead projections process went
        // unreported (lag unknown) while events piled up behind it.
        return (await withDeadline(readLog(deps.events, { after: position, maxCount: cap, ...(filter ? { filter } : {}) }), STORE_DEADLINE_MS)).length
      } catch {
        return null
      }
    }

    const projections: ProjectionReadiness[] = await Promise.all(
      names.map(async (name) => {
        const running = local.find((p) => p.name === name)
        const cp = checkpoints.get(name)
        const checkpoint: ProjectionReadiness['checkpoint'] = rm?.check.reachable ? (cp ? 'present' : 'missing') : 'unknown'
        const position = running ? running.position() : (cp?.position ?? -1)
        const behind = await lag(position, filters.get(name))
        const st = running?.status()
        const updatedAt = cp?.updatedAt ? Date.parse(cp.updatedAt) : NaN
        const stalledSeconds = behind && behind > 0 && Number.isFinite(updatedAt) ? Math.max(0, Math.round((now - updatedAt) / 1000)) : null
        const p: ProjectionReadiness = { name, position, behind, behindAtLeast: behind === cap, inThisProcess: !!running, state: st?.state ?? null, retries: st?.retries ?? 0, lastError: st?.lastError ?? null, checkpoint, stalledSeconds }
        if (p.state === 'failed') reasons.push(`projection ${name}: failed (${p.lastError ?? 'gave up'})`)
        else if (p.state === 'rebuilding') reasons.push(`projection ${name}: rebuilding its read model after the read-model store lost it`)
        else if (checkpoint === 'missing') reasons.push(`projection ${name}: no checkpoint in the read-model store (lost with it, or not written yet)`)
        else if (behind !== null && behind >= t.maxLag) reasons.push(`projection ${name}: ${behind}${p.behindAtLeast ? '+' : ''} events behind the log (READY_MAX_LAG ${t.maxLag})`)
        else if (stalledSeconds !== null && stalledSeconds >= t.stallSeconds) reasons.push(`projection ${name}: ${behind} events to apply and its checkpoint has not moved for ${stalledSeconds} s (READY_STALL_SECONDS ${t.stallSeconds}; is the projections process running?)`)
        return p
      }),
    )

    let forwarder: Readiness['forwarder'] = null
    let kafka: Readiness['kafka'] = null
    if (deps.forwarder) {
      const { running, publisher } = deps.forwarder
      const st = running.status()
      const position = running.position()
      const behind = await lag(position, undefined)
      forwarder = { name: running.name, position, behind, behindAtLeast: behind === cap, inThisProcess: true, state: st.state, retries: st.retries, lastError: st.lastError }
      const state = publisher.state()
      const refusedSeconds = state === 'down' || state === 'connecting' ? Math.round((now - publisher.since()) / 1000) : 0
      // A broker that stops answering without refusing keeps the state `up` while a batch waits
      // out the client's timeouts and retries: that wait counts as not publishing too.
      const waitingSince = publisher.waitingSince()
      const waitingSeconds = waitingSince === null ? 0 : Math.round((now - waitingSince) / 1000)
      const downSeconds = Math.max(refusedSeconds, waitingSeconds)
      const error = publisher.lastError() ?? (waitingSeconds >= t.forwarderMaxDownSeconds ? `a batch has waited ${waitingSeconds} s for Kafka's answer` : null)
      kafka = { state, since: new Date(publisher.since()).toISOString(), downSeconds, error }
      if (st.state === 'failed') reasons.push(`forwarder: failed (${st.lastError ?? 'gave up'})`)
      if (downSeconds >= t.forwarderMaxDownSeconds) reasons.push(`kafka: the forwarder cannot publish for ${downSeconds} s (${error ?? state}; FORWARDER_MAX_DOWN_SECONDS ${t.forwarderMaxDownSeconds})`)
      // Stuck anywhere else (reading the log, its lease, a batch past its deadline): events wait
      // and its position does not move. The clock starts when readiness first sees events waiting
      // at this position: an event just appended after an idle hour is not an hour's stall.
      const waitingEvents = !!behind && behind > 0
      if (position !== forwarderSeen.position || !waitingEvents || !forwarderSeen.waiting) forwarderSeen = { position, waiting: waitingEvents, at: now }
      const stalledSeconds = waitingEvents ? Math.round((now - forwarderSeen.at) / 1000) : 0
      if (stalledSeconds >= t.stallSeconds && downSeconds < t.forwarderMaxDownSeconds) reasons.push(`forwarder: ${behind}${forwarder.behindAtLeast ? '+' : ''} events to publish and its position has not moved for ${stalledSeconds} s (READY_STALL_SECONDS ${t.stallSeconds}${st.lastError ? `; ${st.lastError}` : ''})`)
    }

    const e = deps.engine
    const sst = e.status?.()
    const speech: Readiness['speech'] = sst
      ? { engine: e.engine, provider: e.provider, model: e.model, state: sst.state, summary: sst.summary, reason: sst.reason, details: sst.details }
      : { engine: e.engine, provider: e.provider, model: e.model, state: 'remote', summary: `${e.engine} (${e.provider}), model ${e.model}`, reason: null, details: {} }
    return { ready: reasons.length === 0, roles: [...roles], reasons, eventStore: ev.check, readModelStore: rm?.check ?? null, blobStore: bl?.check ?? null, keyStore: ks?.check ?? null, kafka, projections, forwarder, speech }
  }
}
