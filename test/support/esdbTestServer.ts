// A protocol-level EventStoreDB test server: an in-memory gRPC server speaking the wire protocol of
// EventStoreDB 23.10 through the service definitions shipped inside `@eventstore/db-client`.
// No EventStoreDB can be obtained on these machines, so the ESDB adapter is tested against this
// server with the real client (and against a real server when ESDB_URL is set).
//
// Modelled on the server's gRPC layer (src/EventStore.Core/Services/Transport/Grpc) and its
// commit check (IndexWriter.CheckCommit): expected-version rules, idempotent retries, byte-offset
// log positions, soft and hard deletes, stream and $all reads, catch-up-then-live subscriptions with server-side filters,
// checkpoints and caught-up markers, server feature discovery and gossip.
import * as grpc from '@grpc/grpc-js'
import { randomUUID } from 'node:crypto'
import { once, type EventEmitter } from 'node:events'
import anyPb from 'google-protobuf/google/protobuf/any_pb.js'
import emptyPb from 'google-protobuf/google/protobuf/empty_pb.js'
import codePb from '@eventstore/db-client/generated/code_pb.js'
import gossipGrpc from '@eventstore/db-client/generated/gossip_grpc_pb.js'
import gossipPb from '@eventstore/db-client/generated/gossip_pb.js'
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js'
import serverFeaturesPb from '@eventstore/db-client/generated/serverfeatures_pb.js'
import sharedPb from '@eventstore/db-client/generated/shared_pb.js'
import statusPb from '@eventstore/db-client/generated/status_pb.js'
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js'
import streamsPb from '@eventstore/db-client/generated/streams_pb.js'
import type {
  AppendReq,
  AppendResp,
  BatchAppendReq,
  BatchAppendResp,
  DeleteReq,
  DeleteResp,
  ReadReq,
  ReadResp,
  TombstoneReq,
  TombstoneResp,
} from '@eventstore/db-client/generated/streams_pb.js'
import type { StreamIdentifier, UUID } from '@eventstore/db-client/generated/shared_pb.js'
import type { Code } from '@eventstore/db-client/generated/code_pb.js'
import type { ClusterInfo } from '@eventstore/db-client/generated/gossip_pb.js'
import type { SupportedMethods } from '@eventstore/db-client/generated/serverfeatures_pb.js'
import type { Status } from '@eventstore/db-client/generated/status_pb.js'

export interface EsdbTestServerOptions {
  /**
   * Serve feature discovery (default true). Without it the server looks like EventStoreDB 20.10:
   * the client cannot see BatchAppend and falls back to the Append RPC.
   */
  serverFeatures?: boolean
  /**
   * Period of the `$statsCollected` system events the server writes, as EventStoreDB does every
   * 30 s by default. Shorter here so every test run interleaves system events with user events.
   */
  statsIntervalMs?: number
  /** Port to listen on (default: any free one), so a test can start the server after its clients. */
  port?: number
  /**
   * Secure mode, EventStoreDB's default outside `--insecure`: TLS with this certificate, and
   * every call authenticated from its `authorization: Basic` header against these users.
   */
  secure?: { key: string; cert: string; users: Record<string, { password: string; admin?: boolean }> }
}

export interface EsdbTestServer {
  /** Insecure: `esdb://127.0.0.1:<port>?tls=false`; secure: `esdb://localhost:<port>?tls=true` (add credentials and tlsCAFile). */
  connectionString: string
  port: number
  stop(): Promise<void>
  /**
   * Stops listening, cancelling every call (clients see UNAVAILABLE, as when a node goes down),
   * but keeps the log: `restart()` serves it again on the same port, as a node that restarts
   * on its database does.
   */
  crash(): Promise<void>
  restart(): Promise<void>
  /**
   * While on, the server keeps accepting connections and calls but answers none of them (a node
   * that is wedged: stuck on disk, in a long GC, behind a proxy that holds replies). Calls made
   * meanwhile stay unanswered until the client gives up on them.
   */
  hang(on: boolean): void
  /** Events the server has looked at to answer reads and subscriptions (scanned, not only sent). */
  eventsScanned(): number
  /**
   * While set, this node is not the leader: every Streams call is refused with NotLeader naming
   * `leader`, as EventStoreDB does during and after an election (RpcExceptions.LeaderInfo:
   * NOT_FOUND, exception `not-leader`, `leader-endpoint-host`/`-port`); the client reconnects there.
   */
  redirect(leader: { host: string; port: number } | null): void
}

const SERVER_VERSION = '23.10.0'
/** EventStoreDB's default --max-append-size. */
const MAX_APPEND_SIZE = 1024 * 1024
/** EventStoreDB's catch-up page size, also the default filter search window. */
const READ_BATCH_SIZE = 32
/** Bytes a prepare record adds to its payload in the transaction log (approximately). */
const RECORD_OVERHEAD = 88
const TICKS_PER_MILLISECOND = 10_000n
const STATS_STREAM = '$stats-127.0.0.1:2113'

// Expected versions in the server's own encoding (EventStore.Core.Data.ExpectedVersion).
const EXPECTED_NO_STREAM = -1
const EXPECTED_ANY = -2
const EXPECTED_STREAM_EXISTS = -4
/** An expected revision (>= 0) or one of the EXPECTED_* markers. */
type ExpectedVersion = number

const JSON_CONTENT_TYPE = 'application/json'

// ---------------------------------------------------------------------------------------------
// The transaction log
// ---------------------------------------------------------------------------------------------

interface ProposedEvent {
  id: string
  type: string
  contentType: string
  data: Uint8Array
  metadata: Uint8Array
}

interface StoredEvent extends ProposedEvent {
  streamName: string
  revision: number
  /** Byte offset of the record in the log: its commit and prepare position alike. */
  position: number
  created: Date
}

type AppendOutcome =
  | { result: 'success'; currentRevision: number; position?: number }
  | { result: 'wrong_expected_version'; currentRevision: number }
  | { result: 'stream_deleted' }

type CommitDecision = { decision: 'ok' } | { decision: 'idempotent'; lastRevision: number } | { decision: 'wrong_expected_version' }

const OK: CommitDecision = { decision: 'ok' }
const WRONG_EXPECTED_VERSION: CommitDecision = { decision: 'wrong_expected_version' }

class EventLog {
  readonly events: StoredEvent[] = []
  /** Events looked at to answer reads and subscriptions. */
  scanned = 0
  private readonly streams = new Map<string, StoredEvent[]>()
  /** Latest event per id, as the server's committed-events cache used for idempotency checks. */
  private readonly byId = new Map<string, StoredEvent>()
  private readonly listeners = new Set<() => void>()
  /** Hard-deleted streams: every later read or write of them is refused. */
  private readonly tombstones = new Set<string>()
  private nextPosition = 0

  stream(name: string): readonly StoredEvent[] | undefined {
    return this.streams.get(name)
  }

  /** Position right after the last record: where the next write goes. */
  get endPosition(): number {
    return this.nextPosition
  }

  lastRevision(streamName: string): number {
    return (this.streams.get(streamName)?.length ?? 0) - 1
  }

  isTombstoned(streamName: string): boolean {
    return this.tombstones.has(streamName)
  }

  /** The `$tb` (truncate before) of the stream's metadata: what a soft delete sets. */
  truncateBefore(streamName: string): number | undefined {
    const tb = metadataOf(this, streamName).$tb
    return typeof tb === 'number' ? tb : undefined
  }

  /** Soft-deleted and not appended to since: reads answer StreamNotFound. */
  isSoftDeleted(streamName: string): boolean {
    const tb = this.truncateBefore(streamName)
    return tb !== undefined && tb > this.lastRevision(streamName)
  }

  /**
   * A hard delete: the stream's tombstone, a `$streamDeleted` record, goes to the log (so $all
   * readers see it) but never counts as one of the stream's events.
   */
  tombstone(streamName: string): number {
    this.tombstones.add(streamName)
    const created = new Date()
    const stored: StoredEvent = {
      id: randomUUID(),
      type: '$streamDeleted',
      contentType: JSON_CONTENT_TYPE,
      data: new Uint8Array(),
      metadata: new Uint8Array(),
      streamName,
      // EventStoreDB writes tombstones at EventNumber.DeletedStream (long.MaxValue).
      revision: Number.MAX_SAFE_INTEGER,
      position: this.nextPosition,
      created,
    }
    this.nextPosition += recordSize(stored)
    this.events.push(stored)
    for (const listener of [...this.listeners]) listener()
    return stored.position
  }

  append(streamName: string, expected: ExpectedVersion, proposed: ProposedEvent[]): AppendOutcome {
    if (this.tombstones.has(streamName)) return { result: 'stream_deleted' }
    const currentRevision = this.lastRevision(streamName)
    const check = this.checkCommit(streamName, expected, proposed.map((e) => e.id))
    switch (check.decision) {
      case 'wrong_expected_version':
        return { result: 'wrong_expected_version', currentRevision }
      case 'idempotent':
        return { result: 'success', currentRevision: check.lastRevision, position: this.streams.get(streamName)![check.lastRevision]!.position }
      case 'ok':
        return this.write(streamName, proposed)
    }
  }

  /** First index whose event sits at or after `position`. */
  indexAtOrAfter(position: number): number {
    return this.search((e) => e.position >= position)
  }

  /** First index whose event sits strictly after `position`. */
  indexAfter(position: number): number {
    return this.search((e) => e.position > position)
  }

  /** Only record boundaries and the end of the log are valid read positions. */
  isValidPosition(position: number): boolean {
    if (position >= this.nextPosition) return true
    return this.events[this.indexAtOrAfter(position)]?.position === position
  }

  /** Resolves on the next append, rejects when `signal` aborts. */
  nextAppend(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = () => {
        this.listeners.delete(done)
        signal.removeEventListener('abort', abort)
        resolve()
      }
      const abort = () => {
        this.listeners.delete(done)
        reject(signal.reason)
      }
      if (signal.aborted) return reject(signal.reason)
      this.listeners.add(done)
      signal.addEventListener('abort', abort, { once: true })
    })
  }

  // Port of IndexWriter.CheckCommit. Corrupted idempotency (a retry that only partly matches the
  // stored events) is answered as a wrong expected version, as the storage writer does.
  private checkCommit(streamName: string, expected: ExpectedVersion, ids: string[]): CommitDecision {
    const current = this.lastRevision(streamName)
    // A soft-deleted stream reads as missing and "you are able to write to it again, continuing
    // from where it left off" (see `handleDelete`): writing it as a new stream is accepted, and
    // its revisions continue. (That NoStream is the accepted expectation is our reading of it.)
    if (expected === EXPECTED_NO_STREAM && current >= 0 && this.isSoftDeleted(streamName)) return OK
    if (expected === EXPECTED_STREAM_EXISTS && current < 0) return WRONG_EXPECTED_VERSION
    if (expected === EXPECTED_ANY || expected === EXPECTED_STREAM_EXISTS) return this.checkRetryAnywhere(streamName, ids)
    if (expected < current) return this.checkRetryAt(streamName, expected, ids)
    if (expected > current) return WRONG_EXPECTED_VERSION
    return OK
  }

  /** Without an expected revision a batch is a retry when all its ids are stored in the stream. */
  private checkRetryAnywhere(streamName: string, ids: string[]): CommitDecision {
    const stored = ids.map((id) => this.byId.get(id))
    const firstMissing = stored.findIndex((e) => e?.streamName !== streamName)
    if (ids.length === 0 || firstMissing === 0) return OK
    if (firstMissing > 0) return WRONG_EXPECTED_VERSION
    return { decision: 'idempotent', lastRevision: stored.at(-1)!.revision }
  }

  /** With a stale expected revision a batch is a retry when it matches the events written after it. */
  private checkRetryAt(streamName: string, expected: number, ids: string[]): CommitDecision {
    const events = this.streams.get(streamName) ?? []
    const matches = ids.length > 0 && ids.every((id, i) => events[expected + 1 + i]?.id === id)
    return matches ? { decision: 'idempotent', lastRevision: expected + ids.length } : WRONG_EXPECTED_VERSION
  }

  private write(streamName: string, proposed: ProposedEvent[]): AppendOutcome {
    const stream = this.streams.get(streamName) ?? []
    this.streams.set(streamName, stream)
    const created = new Date()
    for (const event of proposed) {
      const stored: StoredEvent = { ...event, streamName, revision: stream.length, position: this.nextPosition, created }
      this.nextPosition += recordSize(stored)
      stream.push(stored)
      this.events.push(stored)
      this.byId.set(stored.id, stored)
    }
    // An empty write of a missing stream leaves it missing (current revision -1).
    if (stream.length === 0) this.streams.delete(streamName)
    for (const listener of [...this.listeners]) listener()
    return { result: 'success', currentRevision: stream.length - 1, position: stream.at(-1)?.position }
  }

  private search(isAtOrPast: (e: StoredEvent) => boolean): number {
    let low = 0
    let high = this.events.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (isAtOrPast(this.events[mid]!)) high = mid
      else low = mid + 1
    }
    return low
  }
}

const utf8 = new TextEncoder()

const recordSize = (e: StoredEvent): number =>
  RECORD_OVERHEAD + utf8.encode(e.streamName).length + utf8.encode(e.type).length + e.data.length + e.metadata.length

const appendSize = (e: ProposedEvent): number => e.data.length + e.metadata.length + utf8.encode(e.type).length

const writeSystemEvent = (log: EventLog, streamName: string, type: string, data: unknown): number | undefined => {
  const event = { id: randomUUID(), type, contentType: JSON_CONTENT_TYPE, data: utf8.encode(JSON.stringify(data)), metadata: new Uint8Array() }
  const outcome = log.append(streamName, EXPECTED_ANY, [event])
  return outcome.result === 'success' ? outcome.position : undefined
}

/** The stream's metadata: the latest `$metadata` event of `$$<stream>` (an empty object when none). */
function metadataOf(log: EventLog, streamName: string): Record<string, unknown> {
  const meta = log.stream(`$$${streamName}`)?.at(-1)
  if (!meta || meta.type !== '$metadata') return {}
  try {
    const parsed: unknown = JSON.parse(Buffer.from(meta.data).toString('utf8'))
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

// ---------------------------------------------------------------------------------------------
// Wire helpers
// ---------------------------------------------------------------------------------------------

type ServiceError = Partial<grpc.StatusObject> & { code: grpc.status }

function rpcError(code: grpc.status, details: string, exception?: Record<string, string>): ServiceError {
  const metadata = new grpc.Metadata()
  for (const [key, value] of Object.entries(exception ?? {})) metadata.set(key, value)
  return { code, details, metadata }
}

/** How the server refuses any read or write of a hard-deleted stream (RpcExceptions.StreamDeleted). */
const streamDeletedError = (name: string) =>
  rpcError(grpc.status.FAILED_PRECONDITION, `Event stream '${name}' is deleted.`, { exception: 'stream-deleted', 'stream-name': name })

const streamNameOf = (identifier: StreamIdentifier | undefined): string =>
  Buffer.from(identifier?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8')

const streamIdentifier = (name: string): StreamIdentifier => new sharedPb.StreamIdentifier().setStreamName(utf8.encode(name))

function uuidToString(uuid: UUID | undefined): string {
  if (!uuid) return ''
  if (!uuid.hasStructured()) return uuid.getString()
  const structured = uuid.getStructured()!
  const bytes = Buffer.alloc(16)
  bytes.writeBigInt64BE(BigInt(structured.getMostSignificantBits()), 0)
  bytes.writeBigInt64BE(BigInt(structured.getLeastSignificantBits()), 8)
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

function uuidMessage(id: string, structured: boolean): UUID {
  const uuid = new sharedPb.UUID()
  if (!structured) return uuid.setString(id)
  const bytes = Buffer.from(id.replace(/-/g, ''), 'hex')
  const bits = new sharedPb.UUID.Structured()
    .setMostSignificantBits(bytes.readBigInt64BE(0).toString())
    .setLeastSignificantBits(bytes.readBigInt64BE(8).toString())
  return uuid.setStructured(bits)
}

const googleEmpty = () => new emptyPb.Empty()
const sharedEmpty = () => new sharedPb.Empty()

/** An AbortSignal that fires when the client cancels the call (or the server shuts down). */
function callSignal(call: EventEmitter): AbortSignal {
  const controller = new AbortController()
  call.once('cancelled', () => controller.abort(new Error('call cancelled')))
  return controller.signal
}

type ResponseStream<T> = grpc.ServerWritableStream<unknown, T> | grpc.ServerDuplexStream<unknown, T>

/** Writes one message, waiting for the client to drain when the transport buffer is full. */
async function send<T>(call: ResponseStream<T>, message: T, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted()
  if (!call.write(message)) await once(call, 'drain', { signal })
}

// ---------------------------------------------------------------------------------------------
// Streams.Append (one write per call)
// ---------------------------------------------------------------------------------------------

function proposedFrom(message: AppendReq.ProposedMessage | BatchAppendReq.ProposedMessage): ProposedEvent | ServiceError {
  const properties = message.getMetadataMap()
  const type = properties.get('type')
  const contentType = properties.get('content-type')
  const missing = type === undefined ? 'type' : contentType === undefined ? 'content-type' : undefined
  if (missing) {
    return rpcError(grpc.status.INVALID_ARGUMENT, `Required Metadata Property '${missing}' is missing`, {
      exception: 'missing-required-metadata-property',
      'required-metadata-properties': missing,
    })
  }
  return {
    id: uuidToString(message.getId()),
    type: type!,
    contentType: contentType!,
    data: message.getData_asU8(),
    metadata: message.getCustomMetadata_asU8(),
  }
}

const isServiceError = (value: ProposedEvent | ServiceError): value is ServiceError => 'code' in value

function appendExpected(options: AppendReq.Options): ExpectedVersion {
  switch (options.getExpectedStreamRevisionCase()) {
    case streamsPb.AppendReq.Options.ExpectedStreamRevisionCase.REVISION:
      return Number(options.getRevision())
    case streamsPb.AppendReq.Options.ExpectedStreamRevisionCase.NO_STREAM:
      return EXPECTED_NO_STREAM
    case streamsPb.AppendReq.Options.ExpectedStreamRevisionCase.STREAM_EXISTS:
      return EXPECTED_STREAM_EXISTS
    default:
      return EXPECTED_ANY
  }
}

function appendResponse(outcome: Exclude<AppendOutcome, { result: 'stream_deleted' }>, expected: ExpectedVersion): AppendResp {
  const response = new streamsPb.AppendResp()
  if (outcome.result === 'success') {
    const success = new streamsPb.AppendResp.Success()
    if (outcome.currentRevision < 0) success.setNoStream(sharedEmpty())
    else success.setCurrentRevision(String(outcome.currentRevision))
    if (outcome.position === undefined) success.setNoPosition(sharedEmpty())
    else success.setPosition(new streamsPb.AppendResp.Position().setCommitPosition(String(outcome.position)).setPreparePosition(String(outcome.position)))
    return response.setSuccess(success)
  }
  const wrong = new streamsPb.AppendResp.WrongExpectedVersion()
  if (outcome.currentRevision < 0) wrong.setCurrentNoStream(sharedEmpty())
  else wrong.setCurrentRevision(String(outcome.currentRevision))
  if (expected === EXPECTED_ANY) wrong.setExpectedAny(sharedEmpty())
  else if (expected === EXPECTED_STREAM_EXISTS) wrong.setExpectedStreamExists(sharedEmpty())
  else if (expected === EXPECTED_NO_STREAM) wrong.setExpectedNoStream(sharedEmpty())
  else wrong.setExpectedRevision(String(expected))
  return response.setWrongExpectedVersion(wrong)
}

const maxAppendSizeExceeded = () =>
  rpcError(grpc.status.INVALID_ARGUMENT, `Maximum Append Size of ${MAX_APPEND_SIZE} Exceeded.`, {
    exception: 'maximum-append-size-exceeded',
    'maximum-append-size': String(MAX_APPEND_SIZE),
  })

function handleAppend(log: EventLog, call: grpc.ServerReadableStream<AppendReq, AppendResp>, callback: grpc.sendUnaryData<AppendResp>): void {
  let options: AppendReq.Options | undefined
  const events: ProposedEvent[] = []
  let size = 0
  let failure: ServiceError | undefined
  call.on('data', (request: AppendReq) => {
    if (failure) return
    if (!options) {
      options = request.getOptions()
      if (!options) failure = rpcError(grpc.status.INVALID_ARGUMENT, 'the first message must carry the options')
      return
    }
    const proposed = request.getProposedMessage()
    const event = proposed ? proposedFrom(proposed) : rpcError(grpc.status.INVALID_ARGUMENT, 'expected a proposed message')
    if (isServiceError(event)) failure = event
    else if ((size += appendSize(event)) > MAX_APPEND_SIZE) failure = maxAppendSizeExceeded()
    else events.push(event)
  })
  call.on('end', () => {
    if (failure || !options) return callback(failure ?? rpcError(grpc.status.INVALID_ARGUMENT, 'no options sent'))
    const expected = appendExpected(options)
    const streamName = streamNameOf(options.getStreamIdentifier())
    const outcome = log.append(streamName, expected, events)
    if (outcome.result === 'stream_deleted') return callback(streamDeletedError(streamName))
    callback(null, appendResponse(outcome, expected))
  })
}

// ---------------------------------------------------------------------------------------------
// Streams.BatchAppend (many writes multiplexed on one long-lived call, keyed by correlation id)
// ---------------------------------------------------------------------------------------------

interface PendingBatch {
  correlationId: UUID
  streamName: string
  expected: ExpectedVersion
  events: ProposedEvent[]
  size: number
}

function batchExpected(options: BatchAppendReq.Options): ExpectedVersion {
  switch (options.getExpectedStreamPositionCase()) {
    case streamsPb.BatchAppendReq.Options.ExpectedStreamPositionCase.STREAM_POSITION:
      return Number(options.getStreamPosition())
    case streamsPb.BatchAppendReq.Options.ExpectedStreamPositionCase.NO_STREAM:
      return EXPECTED_NO_STREAM
    case streamsPb.BatchAppendReq.Options.ExpectedStreamPositionCase.STREAM_EXISTS:
      return EXPECTED_STREAM_EXISTS
    default:
      return EXPECTED_ANY
  }
}

function packedStatus(code: Code, message: string, detail: { serializeBinary(): Uint8Array }, typeName: string): Status {
  const details = new anyPb.Any()
  details.pack(detail.serializeBinary(), `event_store.client.${typeName}`)
  return new statusPb.Status().setCode(code).setMessage(message).setDetails(details)
}

function wrongExpectedVersionStatus(currentRevision: number, expected: ExpectedVersion): Status {
  const detail = new sharedPb.WrongExpectedVersion()
  if (currentRevision < 0) detail.setCurrentNoStream(googleEmpty())
  else detail.setCurrentStreamRevision(String(currentRevision))
  if (expected === EXPECTED_ANY) detail.setExpectedAny(googleEmpty())
  else if (expected === EXPECTED_STREAM_EXISTS) detail.setExpectedStreamExists(googleEmpty())
  else if (expected === EXPECTED_NO_STREAM) detail.setExpectedNoStream(googleEmpty())
  else detail.setExpectedStreamPosition(String(expected))
  return packedStatus(codePb.Code.ALREADY_EXISTS, 'WrongExpectedVersion', detail, 'WrongExpectedVersion')
}

function batchResponse(batch: PendingBatch, outcome: AppendOutcome | Status): BatchAppendResp {
  const response = new streamsPb.BatchAppendResp()
    .setCorrelationId(batch.correlationId)
    .setStreamIdentifier(streamIdentifier(batch.streamName))
  if (outcome instanceof statusPb.Status) return response.setError(outcome)
  if (outcome.result === 'stream_deleted') {
    const detail = new sharedPb.StreamDeleted().setStreamIdentifier(streamIdentifier(batch.streamName))
    return response.setError(packedStatus(codePb.Code.FAILED_PRECONDITION, 'StreamDeleted', detail, 'StreamDeleted'))
  }
  if (outcome.result === 'wrong_expected_version') return response.setError(wrongExpectedVersionStatus(outcome.currentRevision, batch.expected))
  const success = new streamsPb.BatchAppendResp.Success()
  if (outcome.currentRevision < 0) success.setNoStream(googleEmpty())
  else success.setCurrentRevision(String(outcome.currentRevision))
  if (outcome.position === undefined) success.setNoPosition(googleEmpty())
  else success.setPosition(new sharedPb.AllStreamPosition().setCommitPosition(String(outcome.position)).setPreparePosition(String(outcome.position)))
  return response.setSuccess(success)
}

const badRequest = (message: string) =>
  packedStatus(codePb.Code.INVALID_ARGUMENT, 'BadRequest', new sharedPb.BadRequest().setMessage(message), 'BadRequest')

const maxAppendSizeStatus = () =>
  packedStatus(
    codePb.Code.INVALID_ARGUMENT,
    'MaximumAppendSizeExceeded',
    new sharedPb.MaximumAppendSizeExceeded().setMaxappendsize(MAX_APPEND_SIZE),
    'MaximumAppendSizeExceeded',
  )

function handleBatchAppend(log: EventLog, call: grpc.ServerDuplexStream<BatchAppendReq, BatchAppendResp>, hanging: () => boolean): void {
  const pending = new Map<string, PendingBatch>()
  const reply = (batch: PendingBatch, outcome: AppendOutcome | Status) => {
    pending.delete(uuidToString(batch.correlationId))
    if (!call.cancelled) call.write(batchResponse(batch, outcome))
  }
  call.on('data', (request: BatchAppendReq) => {
    // The call outlives a hang that starts later: the requests sent meanwhile go unanswered too.
    if (hanging()) return
    const key = uuidToString(request.getCorrelationId())
    const options = request.getOptions()
    if (options && !pending.has(key)) {
      const streamName = streamNameOf(options.getStreamIdentifier())
      pending.set(key, { correlationId: request.getCorrelationId()!, streamName, expected: batchExpected(options), events: [], size: 0 })
    }
    // Like the server, fragments of a batch that already failed (or never started) are dropped.
    const batch = pending.get(key)
    if (!batch) return
    for (const message of request.getProposedMessagesList()) {
      const event = proposedFrom(message)
      if (isServiceError(event)) return reply(batch, badRequest(event.details ?? 'invalid proposed message'))
      batch.events.push(event)
      batch.size += appendSize(event)
    }
    if (batch.size > MAX_APPEND_SIZE) return reply(batch, maxAppendSizeStatus())
    if (request.getIsFinal()) reply(batch, log.append(batch.streamName, batch.expected, batch.events))
  })
  call.on('end', () => call.end())
}

// ---------------------------------------------------------------------------------------------
// Streams.Read: stream and $all reads, catch-up subscriptions
// ---------------------------------------------------------------------------------------------

interface EventFilter {
  matches(event: StoredEvent): boolean
  /** Events scanned between two checkpoints. */
  checkpointInterval: number
}

function expressionMatcher(expression: ReadReq.Options.FilterOptions.Expression): (value: string) => boolean {
  const regex = expression.getRegex()
  if (regex) {
    const pattern = new RegExp(regex)
    return (value) => pattern.test(value)
  }
  const prefixes = expression.getPrefixList()
  return (value) => prefixes.some((prefix) => value.startsWith(prefix))
}

function filterFrom(options: ReadReq.Options): EventFilter | undefined {
  const filter = options.getFilter()
  if (!options.hasFilter() || !filter) return undefined
  const byStream = filter.getStreamIdentifier()
  const byType = filter.getEventType()
  const matcher = expressionMatcher((byStream ?? byType)!)
  const window = filter.hasMax() ? filter.getMax() : READ_BATCH_SIZE
  return {
    matches: byStream ? (e) => matcher(e.streamName) : (e) => matcher(e.type),
    checkpointInterval: Math.max(1, filter.getCheckpointintervalmultiplier() * window),
  }
}

function recordedEvent(event: StoredEvent, structuredIds: boolean): ReadResp.ReadEvent.RecordedEvent {
  const recorded = new streamsPb.ReadResp.ReadEvent.RecordedEvent()
    .setId(uuidMessage(event.id, structuredIds))
    .setStreamIdentifier(streamIdentifier(event.streamName))
    .setStreamRevision(String(event.revision))
    // Since EventStoreDB 22.10 stream reads carry $all positions too (gRPC, non-transaction events).
    .setCommitPosition(String(event.position))
    .setPreparePosition(String(event.position))
    .setData(event.data)
    .setCustomMetadata(event.metadata)
  recorded
    .getMetadataMap()
    .set('type', event.type)
    .set('content-type', event.contentType)
    .set('created', String(BigInt(event.created.getTime()) * TICKS_PER_MILLISECOND))
  return recorded
}

const eventResponse = (event: StoredEvent, structuredIds: boolean): ReadResp =>
  new streamsPb.ReadResp().setEvent(
    new streamsPb.ReadResp.ReadEvent().setEvent(recordedEvent(event, structuredIds)).setCommitPosition(String(event.position)),
  )

const checkpointResponse = (event: StoredEvent): ReadResp =>
  new streamsPb.ReadResp().setCheckpoint(
    new streamsPb.ReadResp.Checkpoint().setCommitPosition(String(event.position)).setPreparePosition(String(event.position)),
  )

/** Forwards from revision `from` or backwards from revision `from`, at most `count` events. */
function selectStreamEvents(events: readonly StoredEvent[], stream: ReadReq.Options.StreamOptions, backwards: boolean, count: number) {
  const last = events.length - 1
  const RevisionCase = streamsPb.ReadReq.Options.StreamOptions.RevisionOptionCase
  const from = {
    [RevisionCase.REVISION]: Number(stream.getRevision()),
    [RevisionCase.START]: 0,
    [RevisionCase.END]: backwards ? last : last + 1,
    [RevisionCase.REVISION_OPTION_NOT_SET]: 0,
  }[stream.getRevisionOptionCase()]
  if (!backwards) return events.slice(from, from + count)
  // Backwards from beyond the end starts at the last event, as the server does.
  const top = Math.min(from, last)
  return events.slice(Math.max(0, top - count + 1), top + 1).reverse()
}

/** Forwards reads include `from`; backwards reads return the events before it. */
function selectAllEvents(log: EventLog, all: ReadReq.Options.AllOptions, backwards: boolean, count: number, filter?: EventFilter) {
  const AllCase = streamsPb.ReadReq.Options.AllOptions.AllOptionCase
  const position = Number(all.getPosition()?.getCommitPosition() ?? 0)
  const index = {
    [AllCase.POSITION]: log.indexAtOrAfter(position),
    [AllCase.START]: 0,
    [AllCase.END]: log.events.length,
    [AllCase.ALL_OPTION_NOT_SET]: 0,
  }[all.getAllOptionCase()]
  const candidates = backwards ? log.events.slice(0, index).reverse() : log.events.slice(index)
  const selected: StoredEvent[] = []
  for (const event of candidates) {
    if (selected.length >= count) break
    log.scanned++
    if (!filter || filter.matches(event)) selected.push(event)
  }
  return selected
}

async function handleRead(log: EventLog, call: grpc.ServerWritableStream<ReadReq, ReadResp>): Promise<void> {
  const signal = callSignal(call)
  try {
    const options = call.request.getOptions()
    if (!options) return void call.emit('error', rpcError(grpc.status.INVALID_ARGUMENT, 'options are required'))
    if (options.hasSubscription()) return await subscribe(log, call, options, signal)
    const error = await read(log, call, options, signal)
    if (error) call.emit('error', error)
    else call.end()
  } catch (error) {
    // A cancelled call has nobody left to answer.
    if (!signal.aborted) call.emit('error', rpcError(grpc.status.INTERNAL, String(error)))
  }
}

/** Sends the selected events; returns the error to end the call with, if any. */
async function read(
  log: EventLog,
  call: grpc.ServerWritableStream<ReadReq, ReadResp>,
  options: ReadReq.Options,
  signal: AbortSignal,
): Promise<ServiceError | undefined> {
  const structuredIds = options.getUuidOption()?.hasStructured() ?? false
  const backwards = options.getReadDirection() === streamsPb.ReadReq.Options.ReadDirection.BACKWARDS
  const count = Number(options.getCount())
  const stream = options.getStream()
  const all = options.getAll()
  let events: StoredEvent[]
  if (stream) {
    const name = streamNameOf(stream.getStreamIdentifier())
    if (log.isTombstoned(name)) return streamDeletedError(name)
    const stored = log.stream(name)
    if (!stored || log.isSoftDeleted(name)) {
      // Missing streams are not an error: the call ends normally after this message.
      const notFound = new streamsPb.ReadResp.StreamNotFound().setStreamIdentifier(streamIdentifier(name))
      await send(call, new streamsPb.ReadResp().setStreamNotFound(notFound), signal)
      return undefined
    }
    const keep = retention(log, name)
    events = keep ? selectStreamEvents(stored, stream, backwards, stored.length).filter(keep).slice(0, count) : selectStreamEvents(stored, stream, backwards, count)
  } else if (all) {
    const position = all.getPosition()
    if (position && !log.isValidPosition(Number(position.getCommitPosition()))) {
      return rpcError(grpc.status.UNKNOWN, 'Unexpected ReadAllResult: InvalidPosition')
    }
    events = selectAllEvents(log, all, backwards, count, filterFrom(options))
  } else {
    return rpcError(grpc.status.INVALID_ARGUMENT, 'read a stream or $all')
  }
  if (stream) log.scanned += events.length
  for (const event of events) await send(call, eventResponse(event, structuredIds), signal)
  return undefined
}

/**
 * The events of a stream that its metadata still lets reads return. EventStoreDB docs, "Stream
 * metadata" (developers.eventstore.com/server/v23.10/streams.html#stream-metadata): `$maxCount`
 * "sets a sliding window based on the number of items in the stream. When data reaches a certain
 * length it disappears automatically from the stream"; `$maxAge` "sets a sliding window based on
 * dates. When data reaches a certain age it disappears automatically from the stream" (seconds).
 * The metadata is the latest `$metadata` event of `$$<stream>`. Such events are only removed
 * from disk (and from $all) by a scavenge, which this server never runs, so $all reads still
 * return them, as a real server's do until it scavenges.
 */
function retention(log: EventLog, name: string): ((e: StoredEvent) => boolean) | null {
  const parsed = metadataOf(log, name)
  if (parsed.$maxCount === undefined && parsed.$maxAge === undefined && parsed.$tb === undefined) return null
  const byCount = typeof parsed.$maxCount === 'number' ? log.lastRevision(name) - parsed.$maxCount + 1 : -Infinity
  // `$tb` hides the events before it: set by a soft delete (see handleDelete).
  const minRevision = Math.max(byCount, typeof parsed.$tb === 'number' ? parsed.$tb : -Infinity)
  const oldest = typeof parsed.$maxAge === 'number' ? Date.now() - parsed.$maxAge * 1000 : -Infinity
  return (e) => e.revision >= minRevision && e.created.getTime() >= oldest
}

interface SubscriptionSource {
  /** The events the subscription follows, re-read on every pass since the log grows. */
  events(): readonly StoredEvent[]
  startIndex: number
}

function subscriptionSource(log: EventLog, options: ReadReq.Options): SubscriptionSource | ServiceError {
  const stream = options.getStream()
  if (stream) {
    const name = streamNameOf(stream.getStreamIdentifier())
    const events = () => log.stream(name) ?? []
    const RevisionCase = streamsPb.ReadReq.Options.StreamOptions.RevisionOptionCase
    const startIndex = {
      // Subscriptions start after the given revision.
      [RevisionCase.REVISION]: Number(stream.getRevision()) + 1,
      [RevisionCase.START]: 0,
      [RevisionCase.END]: events().length,
      [RevisionCase.REVISION_OPTION_NOT_SET]: 0,
    }[stream.getRevisionOptionCase()]
    return { events, startIndex }
  }
  const all = options.getAll()
  if (!all) return rpcError(grpc.status.INVALID_ARGUMENT, 'subscribe to a stream or $all')
  const AllCase = streamsPb.ReadReq.Options.AllOptions.AllOptionCase
  const startIndex = {
    // Subscriptions start after the given position.
    [AllCase.POSITION]: log.indexAfter(Number(all.getPosition()?.getCommitPosition() ?? 0)),
    [AllCase.START]: 0,
    [AllCase.END]: log.events.length,
    [AllCase.ALL_OPTION_NOT_SET]: 0,
  }[all.getAllOptionCase()]
  return { events: () => log.events, startIndex }
}

/**
 * Confirmation, then the events after the start (catch-up), a caught-up marker, then live events
 * as they are appended. Filtered subscriptions get a checkpoint every `checkpointInterval` events
 * scanned. Ends only when the client cancels.
 */
async function subscribe(log: EventLog, call: grpc.ServerWritableStream<ReadReq, ReadResp>, options: ReadReq.Options, signal: AbortSignal) {
  const source = subscriptionSource(log, options)
  if ('code' in source) return void call.emit('error', source)
  const filter = options.getStream() ? undefined : filterFrom(options)
  const structuredIds = options.getUuidOption()?.hasStructured() ?? false
  const confirmation = new streamsPb.ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())
  await send(call, new streamsPb.ReadResp().setConfirmation(confirmation), signal)

  let index = source.startIndex
  let scanned = 0
  let caughtUp = false
  for (;;) {
    for (let events = source.events(); index < events.length; events = source.events()) {
      const event = events[index++]!
      log.scanned++
      if (!filter || filter.matches(event)) await send(call, eventResponse(event, structuredIds), signal)
      if (filter && ++scanned % filter.checkpointInterval === 0) await send(call, checkpointResponse(event), signal)
    }
    if (!caughtUp) {
      caughtUp = true
      await send(call, new streamsPb.ReadResp().setCaughtUp(new streamsPb.ReadResp.CaughtUp()), signal)
      continue
    }
    // Checked and registered in the same tick, so no append slips in between.
    if (index >= source.events().length) await log.nextAppend(signal)
  }
}

// ---------------------------------------------------------------------------------------------
// Streams.Delete (soft) and Streams.Tombstone (hard)
// ---------------------------------------------------------------------------------------------
//
// EventStoreDB documentation, "Deleting streams and events"
// (developers.eventstore.com/server/v23.10/streams.html#deleting-streams-and-events) and the
// client docs on delete/tombstone: a soft delete "makes use of Truncate before. When a stream is
// deleted, its Truncate before is set to the stream's current last event number. When a soft
// deleted stream is read, the read will return a StreamNotFound. After deleting the stream, you
// are able to write to it again, continuing from where it left off." A hard delete "writes a
// tombstone event to the stream, permanently deleting it. The stream cannot be recreated or
// written to again. Tombstone events are written with the event type '$streamDeleted'. When a
// hard deleted stream is read, the read will return a StreamDeleted."

type DeleteOptions = DeleteReq.Options | TombstoneReq.Options

function deleteExpected(options: DeleteOptions): ExpectedVersion {
  // Both messages number their cases alike (streams.proto).
  switch (options.getExpectedStreamRevisionCase() as number) {
    case streamsPb.DeleteReq.Options.ExpectedStreamRevisionCase.REVISION:
      return Number(options.getRevision())
    case streamsPb.DeleteReq.Options.ExpectedStreamRevisionCase.NO_STREAM:
      return EXPECTED_NO_STREAM
    case streamsPb.DeleteReq.Options.ExpectedStreamRevisionCase.STREAM_EXISTS:
      return EXPECTED_STREAM_EXISTS
    default:
      return EXPECTED_ANY
  }
}

function checkDelete(log: EventLog, name: string, expected: ExpectedVersion): ServiceError | undefined {
  if (log.isTombstoned(name)) return streamDeletedError(name)
  const current = log.isSoftDeleted(name) ? -1 : log.lastRevision(name)
  const ok =
    expected === EXPECTED_ANY ||
    (expected === EXPECTED_NO_STREAM && current < 0) ||
    (expected === EXPECTED_STREAM_EXISTS && current >= 0) ||
    expected === current
  if (ok) return undefined
  return rpcError(grpc.status.FAILED_PRECONDITION, `WrongExpectedVersion: expected ${expected}, actual ${current}`, {
    exception: 'wrong-expected-version',
    'expected-version': String(expected),
    'actual-version': String(current),
  })
}

function handleDelete(log: EventLog, call: grpc.ServerUnaryCall<DeleteReq, DeleteResp>, callback: grpc.sendUnaryData<DeleteResp>): void {
  const options = call.request.getOptions()
  if (!options) return callback(rpcError(grpc.status.INVALID_ARGUMENT, 'options are required'))
  const name = streamNameOf(options.getStreamIdentifier())
  const refused = checkDelete(log, name, deleteExpected(options))
  if (refused) return callback(refused)
  const position = writeSystemEvent(log, `$$${name}`, '$metadata', { ...metadataOf(log, name), $tb: log.lastRevision(name) + 1 })!
  callback(null, new streamsPb.DeleteResp().setPosition(new streamsPb.DeleteResp.Position().setCommitPosition(String(position)).setPreparePosition(String(position))))
}

function handleTombstone(log: EventLog, call: grpc.ServerUnaryCall<TombstoneReq, TombstoneResp>, callback: grpc.sendUnaryData<TombstoneResp>): void {
  const options = call.request.getOptions()
  if (!options) return callback(rpcError(grpc.status.INVALID_ARGUMENT, 'options are required'))
  const name = streamNameOf(options.getStreamIdentifier())
  const refused = checkDelete(log, name, deleteExpected(options))
  if (refused) return callback(refused)
  const position = log.tombstone(name)
  callback(null, new streamsPb.TombstoneResp().setPosition(new streamsPb.TombstoneResp.Position().setCommitPosition(String(position)).setPreparePosition(String(position))))
}

// ---------------------------------------------------------------------------------------------
// Secure mode: who is calling, and may they
// ---------------------------------------------------------------------------------------------
//
// EventStoreDB authenticates each gRPC call from its `authorization` header (Basic user:password,
// as the client sends the connection string's credentials); wrong credentials are refused as
// UNAUTHENTICATED. Anonymous calls may not touch streams: anonymous stream access is off by
// default since EventStoreDB 23.6 (AllowAnonymousStreamAccess=false, EventStore/EventStore PR
// #3905, "Disabled anonymous access by default"). `$all` falls under the default system stream
// ACL, `$systemStreamAcl`, which grants $admins only (docs, "Access control lists"), so a
// subscription to `$all` needs an admin user. Refusals carry the `access-denied` exception.

type Caller = { user: string; admin: boolean } | 'anonymous'

function callerOf(metadata: grpc.Metadata, users: NonNullable<EsdbTestServerOptions['secure']>['users']): Caller | ServiceError {
  const header = metadata.get('authorization')[0]
  if (header === undefined) return 'anonymous'
  const match = /^Basic (.+)$/.exec(String(header))
  const [user, ...rest] = match ? Buffer.from(match[1]!, 'base64').toString('utf8').split(':') : []
  const known = user === undefined ? undefined : users[user]
  if (!known || known.password !== rest.join(':')) return rpcError(grpc.status.UNAUTHENTICATED, 'Bad credentials')
  return { user: user!, admin: known.admin ?? false }
}

const accessDenied = (what: string) => rpcError(grpc.status.PERMISSION_DENIED, `Access denied: ${what}`, { exception: 'access-denied' })

/** The refusal for a call on a stream (or on `$all`), or undefined when it may go on. */
function refusal(caller: Caller | ServiceError, target: 'stream' | '$all'): ServiceError | undefined {
  if (typeof caller === 'object' && 'code' in caller) return caller
  if (caller === 'anonymous') return accessDenied(`anonymous access to ${target === '$all' ? '$all' : 'streams'} is not allowed`)
  if (target === '$all' && !caller.admin) return accessDenied(`${caller.user} may not read $all ($systemStreamAcl: $admins)`)
  return undefined
}

// ---------------------------------------------------------------------------------------------
// ServerFeatures and Gossip
// ---------------------------------------------------------------------------------------------

function supportedMethods(): SupportedMethods {
  const methods: [service: string, method: string, features: string[]][] = [
    ['event_store.client.streams.streams', 'read', ['position', 'events']],
    ['event_store.client.streams.streams', 'append', []],
    ['event_store.client.streams.streams', 'batchappend', ['deadline_duration']],
    ['event_store.client.streams.streams', 'delete', []],
    ['event_store.client.streams.streams', 'tombstone', []],
    ['event_store.client.gossip.gossip', 'read', []],
    ['event_store.client.server_features.serverfeatures', 'getsupportedmethods', []],
  ]
  return new serverFeaturesPb.SupportedMethods()
    .setEventStoreServerVersion(SERVER_VERSION)
    .setMethodsList(
      methods.map(([service, method, features]) =>
        new serverFeaturesPb.SupportedMethod().setServiceName(service).setMethodName(method).setFeaturesList(features),
      ),
    )
}

/** A single-node cluster whose leader is this server, for `esdb+discover://` connection strings. */
function clusterInfo(instanceId: string, port: number): ClusterInfo {
  const member = new gossipPb.MemberInfo()
    .setInstanceId(uuidMessage(instanceId, false))
    .setTimeStamp(String(BigInt(Date.now()) * TICKS_PER_MILLISECOND))
    .setState(gossipPb.MemberInfo.VNodeState.LEADER)
    .setIsAlive(true)
    .setHttpEndPoint(new gossipPb.EndPoint().setAddress('127.0.0.1').setPort(port))
  return new gossipPb.ClusterInfo().setMembersList([member])
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

export async function startEsdbTestServer(options: EsdbTestServerOptions = {}): Promise<EsdbTestServer> {
  const log = new EventLog()
  // A fresh EventStoreDB already holds system events: user events never start at position 0.
  writeSystemEvent(log, `$$${STATS_STREAM}`, '$metadata', { $maxAge: 86400 })
  writeSystemEvent(log, STATS_STREAM, '$statsCollected', { 'proc-startTime': new Date().toISOString() })

  const instanceId = randomUUID()
  let port = options.port ?? 0
  let hanging = false
  // A hung server takes the call and never answers (nor reads what the client streams).
  const unlessHanging =
    <Args extends unknown[]>(handler: (...args: Args) => void) =>
    (...args: Args): void => {
      if (!hanging) handler(...args)
    }
  const secure = options.secure
  let leader: { host: string; port: number } | null = null
  /** Why this call is refused: another node leads, or secure mode does not let the caller (nothing in insecure mode). */
  const refused = (call: { metadata: grpc.Metadata }, target: 'stream' | '$all') => {
    if (leader) {
      return rpcError(grpc.status.NOT_FOUND, 'Leader info available', {
        exception: 'not-leader',
        'leader-endpoint-host': leader.host,
        'leader-endpoint-port': String(leader.port),
      })
    }
    return secure ? refusal(callerOf(call.metadata, secure.users), target) : undefined
  }
  const listen = async (): Promise<grpc.Server> => {
    const server = new grpc.Server()
    server.addService(streamsGrpc.StreamsService, {
      read: unlessHanging((call: grpc.ServerWritableStream<ReadReq, ReadResp>) => {
        const denied = refused(call, call.request.getOptions()?.hasAll() ? '$all' : 'stream')
        if (denied) return void call.emit('error', denied)
        void handleRead(log, call)
      }),
      append: unlessHanging((call: grpc.ServerReadableStream<AppendReq, AppendResp>, callback: grpc.sendUnaryData<AppendResp>) => {
        const denied = refused(call, 'stream')
        if (denied) return callback(denied)
        handleAppend(log, call, callback)
      }),
      batchAppend: unlessHanging((call: grpc.ServerDuplexStream<BatchAppendReq, BatchAppendResp>) => {
        const denied = refused(call, 'stream')
        if (denied) return void call.emit('error', denied)
        handleBatchAppend(log, call, () => hanging)
      }),
      delete: unlessHanging((call: grpc.ServerUnaryCall<DeleteReq, DeleteResp>, callback: grpc.sendUnaryData<DeleteResp>) => {
        const denied = refused(call, 'stream')
        if (denied) return callback(denied)
        handleDelete(log, call, callback)
      }),
      tombstone: unlessHanging((call: grpc.ServerUnaryCall<TombstoneReq, TombstoneResp>, callback: grpc.sendUnaryData<TombstoneResp>) => {
        const denied = refused(call, 'stream')
        if (denied) return callback(denied)
        handleTombstone(log, call, callback)
      }),
    })
    if (options.serverFeatures ?? true) {
      server.addService(serverFeaturesGrpc.ServerFeaturesService, {
        getSupportedMethods: unlessHanging((_call: unknown, callback: grpc.sendUnaryData<SupportedMethods>) => callback(null, supportedMethods())),
      })
    }
    server.addService(gossipGrpc.GossipService, {
      read: unlessHanging((_call: unknown, callback: grpc.sendUnaryData<ClusterInfo>) => callback(null, clusterInfo(instanceId, port))),
    })
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(
        `127.0.0.1:${port}`,
        secure
          ? grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(secure.key), cert_chain: Buffer.from(secure.cert) }], false)
          : grpc.ServerCredentials.createInsecure(),
        (error, bound) => (error ? reject(error) : resolve(bound)),
      ),
    )
    return server
  }
  let server: grpc.Server | null = await listen()
  const stats = setInterval(
    () => writeSystemEvent(log, STATS_STREAM, '$statsCollected', { 'proc-cpu': Math.random() }),
    options.statsIntervalMs ?? 250,
  )
  stats.unref()

  return {
    connectionString: secure ? `esdb://localhost:${port}?tls=true` : `esdb://127.0.0.1:${port}?tls=false`,
    port,
    async stop() {
      clearInterval(stats)
      // Live subscriptions never end by themselves: cancel every call rather than wait for them.
      server?.forceShutdown()
      server = null
    },
    async crash() {
      server?.forceShutdown()
      server = null
    },
    async restart() {
      if (!server) server = await listen()
    },
    hang(on) {
      hanging = on
    },
    redirect(to) {
      leader = to
    },
    eventsScanned: () => log.scanned,
  }
}
