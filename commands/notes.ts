// Note commands: create (import link or upload slot), finalize an upload, edit. Each checks
// what needs I/O (the link's addresses, the uploaded bytes, credits and quotas) and then lets
// the note decider decide.
import { createHash, randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { DomainError, isDomainError } from '../domain/errors.ts'
import { uuidFromName } from '../domain/ids.ts'
import { DEFAULT_MAX_DURATION_SECONDS, PLAN_LIMITS, durationLimitMessage, type Plan } from '../domain/credits/plans.ts'
import { PRICES } from '../domain/credits/prices.ts'
import { audioBlobOf, noteDecider, noteStream, ownedNote, statusOf, type NoteCommand } from '../domain/notes/note.ts'
import { classifySourceUrl } from '../domain/notes/sourceUrl.ts'
import { isAudioOrVideo, parseMediaType } from '../domain/notes/mediaType.ts'
import { refusedTarget } from './publicTarget.ts'
import { minutesFor, shownSeconds, usageDecider, usageStream, type UsageCommand } from '../domain/usage/usage.ts'
import { folderDecider, folderStream, ownedFolder } from '../domain/folders/folder.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { MediaProbe } from '../ports/mediaProbe.ts'
import type { HostResolver } from '../ports/hostResolver.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import type { CreateNoteRequest, CreateNoteResponse, PatchNoteRequest } from '../contract/notes.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { CreditCommands } from './credits.ts'
import type { Caller } from './context.ts'
import type { ContentKeyStore } from '../ports/contentKeys.ts'
import type { DeliverableReads } from './reads.ts'
import type { VoiceCommands } from './voice.ts'

/** The id of a note about to be created; `newStream` when it was drawn fresh (not derived from an Idempotency-Key). */
interface NewNote {
  noteId: string
  newStream: boolean
}

/** Credits held when a link is accepted; the real price (per started minute) is captured once the duration is known. */
export const IMPORT_RESERVE_CREDITS = PRICES.import.credits

export interface NoteCommandsConfig {
  /** Hosts, IPs or CIDRs that imports may reach although they are not public (self-hosting, tests; domain/net/addressPolicy.ts). */
  importAllowlist: readonly string[]
  uploadUrlTtlSeconds: number
  /** The longest audio a note may have, per plan (PLAN_MAX_DURATION_MINUTES). */
  maxDurationSeconds?: Readonly<Record<Plan, number>>
}

export interface NoteCommandsDeps {
  handler: CommandHandler
  credits: CreditCommands
  blobs: BlobStore
  probe: MediaProbe
  resolver: HostResolver
  docs: DocumentStore
  sync: ReadModelSync
  config: NoteCommandsConfig
  /** Destroys a deleted note's content key (crypto-shredding). */
  contentKeys: Pick<ContentKeyStore, 'shred' | 'issueId'>
  /** A note's deliverables, whose files go with it. */
  deliverables: Pick<DeliverableReads, 'list' | 'file'>
  /** What the note gave the voice profiles goes with it (commands/voice.ts, forgetNote). */
  voice?: Pick<VoiceCommands, 'forgetNote'>
  clock?: () => Date
  /** Fault injection for crash tests: called at named points (`crash-after-import-reserve`). */
  fault?: (point: string) => void
}

/** Every read model that keeps something of a note; a deletion waits until each has dropped it. */
const NOTE_READ_MODELS = ['notes', 'speakers', 'segment-index', 'translations', 'transcription-jobs', 'analysis', 'deliverables']

/** A finalize refused for these reasons is remembered on the note (its code is the note's errorCode if the upload expires). */
const UPLOAD_REFUSALS: ReadonlySet<string> = new Set(['unsupported_media_type', 'file_too_large', 'quota_exceeded', 'invalid_request'])

/** Where a client PUTs an upload's bytes (the presigned URL's key); they may change there until finalize. */
export const uploadKey = (noteId: string) => `uploads/${noteId}`
/** The bytes one finalize checked, copied out of the upload key: nothing else ever writes here. */
const boundUploadKey = (noteId: string) => `uploads/${noteId}.bound-${randomUUID()}`

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

export class NoteCommands {
  private readonly clock: () => Date
  constructor(private readonly deps: NoteCommandsDeps) {
    this.clock = deps.clock ?? (() => new Date())
  }

  private now = () => this.clock().toISOString()

  /**
   * Answers from the command's own events, without waiting for the notes projection: the
   * position goes to the account's next read instead (readmodels/queries.ts waits for it there),
   * so a create costs its append and nothing more, and a GET after it still finds the note.
   * It waits only when the projection has fallen far behind (back-pressure, `wrote`).
   */
  private async run(caller: Caller, noteId: string, command: NoteCommand, { newStream = false } = {}) {
    const result = await this.deps.handler.handle(noteStream.of(noteId), command, noteDecider, { metadata: { requestId: caller.requestId, accountId: caller.accountId }, newStream })
    await this.deps.sync.wrote(caller.accountId, 'notes', result.position)
    return result
  }

  /** Refuses an upload's bytes unless the note exists and still waits for them (PUT /uploads/:id). */
  async expectUpload(noteId: string): Promise<void> {
    const { state } = await this.deps.handler.load(noteStream.of(noteId), noteDecider)
    if (!state.exists) throw new DomainError('not_found', 'No such note.')
    if (state.phase !== 'awaiting_upload') throw new DomainError('invalid_state', 'This note is not waiting for an upload any more.', { current: statusOf(state.phase) })
  }

  /**
   * The stored audio of a note (the dashboard's player): the upload's blob, when the caller owns
   * the note and the bytes are there. Imports keep no audio (their source is fetched for the
   * transcription and dropped), so they have none.
   */
  async audio(caller: Caller, noteId: string): Promise<{ blobKey: string; contentType: string; sizeBytes: number } | null> {
    const { state } = await this.deps.handler.load(noteStream.of(noteId), noteDecider)
    const key = audioBlobOf(ownedNote(state, caller.accountId))
    const blob = key ? await this.deps.blobs.stat(key) : null
    return key && blob ? { blobKey: key, contentType: blob.contentType, sizeBytes: blob.sizeBytes } : null
  }

  /** POST /v1/notes and MCP import_from_url. `idempotencyKey` makes a retried request return the first answer. */
  async create(caller: Caller, body: CreateNoteRequest, idempotencyKey?: string): Promise<CreateNoteResponse> {
    const keyed = idempotencyKey ? uuidFromName(`note:${caller.accountId}`, idempotencyKey) : null
    if (keyed) await this.assertSameRequest(caller, keyed, body)
    // A fresh id comes with its content key stored already, so the create waits on one durable
    // write (its event's) rather than two. It is asked for once the request has passed its own
    // checks (media type, size, quota, a public link), so those refusals leave no key behind.
    // An issued id is new, so its stream is not read before the create (`newStream`).
    const newNote = async (): Promise<NewNote> => (keyed ? { noteId: keyed, newStream: false } : { noteId: await this.deps.contentKeys.issueId(), newStream: true })
    return body.audioUrl !== undefined ? this.createImport(caller, newNote, body.audioUrl, body) : this.createUpload(caller, newNote, body)
  }

  private async createImport(caller: Caller, newNote: () => Promise<NewNote>, audioUrl: string, body: CreateNoteRequest): Promise<CreateNoteResponse> {
    const source = classifySourceUrl(audioUrl)
    await this.assertPublicTarget(source.url)
    const { noteId, newStream } = await newNote()
    const reservationId = uuidFromName(`import:${noteId}`, 'reservation')
    await this.deps.credits.reserve(caller.accountId, { operation: 'import', amount: IMPORT_RESERVE_CREDITS, noteId, requestId: caller.requestId, reservationId })
    // A crash here leaves the hold without its note: the hold sweeper (workers/creditHolds.ts)
    // releases it once the lease has passed, and the auditor reports it until then.
    this.deps.fault?.('crash-after-import-reserve')
    try {
      await this.run(caller, noteId, {
        type: 'CreateNote',
        noteId,
        accountId: caller.accountId,
        sourceType: 'url',
        origin: source.origin,
        provider: source.provider,
        sourceUrl: source.url.href,
        title: body.title ?? source.fallbackTitle,
        language: body.language ?? null,
        speakers: body.speakers ?? null,
        keepAudio: false,
        upload: null,
        jobId: uuidFromName(`job:${noteId}`, 'transcription'),
        reservationId,
        now: this.now(),
      }, { newStream })
    } catch (err) {
      await this.deps.credits.release(caller.accountId, reservationId, 'the note could not be created').catch(() => {})
      throw err
    }
    return {
      noteId,
      status: 'processing',
      provider: source.provider,
      next: `Poll GET /v1/notes/${noteId} until status is "ready" (or "failed", with errorCode). ${IMPORT_RESERVE_CREDITS} credits are held now; the final price is 50 per started minute of audio.`,
    }
  }

  /**
   * A key names one request: the note it created must come from the same source (link, or
   * uploaded file name). Another source under the same key is 409 `invalid_state` with the note's
   * state, checked before anything is held, so the first request's hold stays as it is.
   */
  private async assertSameRequest(caller: Caller, noteId: string, body: CreateNoteRequest) {
    const { state } = await this.deps.handler.load(noteStream.of(noteId), noteDecider)
    if (!state.exists || state.accountId !== caller.accountId) return
    const same = body.audioUrl !== undefined ? state.sourceUrl === classifySourceUrl(body.audioUrl).url.href : state.sourceType === 'upload' && state.upload?.filename === body.filename
    if (!same) {
      throw new DomainError('invalid_state', `This Idempotency-Key already created note ${noteId} from another source; send a new key for a new note.`, { current: statusOf(state.phase) })
    }
  }

  /** Refuses links whose host resolves to loopback, private or link-local addresses unless allowlisted. */
  private async assertPublicTarget(url: URL) {
    const refused = await refusedTarget(this.deps.resolver, url, this.deps.config.importAllowlist)
    if (refused) throw new DomainError('invalid_audio_url', `This link cannot be imported: ${refused}; only public links can be.`)
  }

  private async createUpload(caller: Caller, newNote: () => Promise<NewNote>, body: CreateNoteRequest): Promise<CreateNoteResponse> {
    const filename = body.filename!
    const media = parseMediaType(body.contentType!)
    if (!isAudioOrVideo(media)) throw new DomainError('unsupported_media_type', `contentType must be audio/* or video/* (parameters such as ;codecs=opus are fine), got ${JSON.stringify(body.contentType)}.`)
    // Signed and stored as declared (canonical spelling), so the PUT may send the same header.
    const contentType = media.canonical
    const limits = PLAN_LIMITS[caller.plan]
    const declared = body.fileSizeBytes ?? null
    if (declared !== null && declared > limits.maxFileBytes) {
      throw new DomainError('file_too_large', `The ${caller.plan} plan accepts files up to ${limits.maxFileBytes} bytes; this one is ${declared}.`, { maxBytes: limits.maxFileBytes })
    }
    const stored = (await this.deps.handler.load(usageStream.of(caller.accountId), usageDecider)).state.storedBytes
    if (stored + (declared ?? 1) > limits.storageBytes) {
      throw new DomainError('file_too_large', `The storage quota of the ${caller.plan} plan (${limits.storageBytes} bytes) is used up (${stored} bytes stored).`, {
        storageBytes: limits.storageBytes,
        storedBytes: stored,
      })
    }
    const { noteId, newStream } = await newNote()
    await this.run(caller, noteId, {
      type: 'CreateNote',
      noteId,
      accountId: caller.accountId,
      sourceType: 'upload',
      origin: contentType.startsWith('video/') ? 'video' : 'audio',
      provider: null,
      sourceUrl: null,
      title: body.title ?? (filename.replace(/\.[A-Za-z0-9]{1,5}$/, '').trim() || filename),
      language: body.language ?? null,
      speakers: body.speakers ?? null,
      keepAudio: body.keepAudio ?? false,
      upload: { filename, contentType, declaredBytes: declared },
      jobId: null,
      reservationId: null,
      now: this.now(),
    }, { newStream })
    const ttl = this.deps.config.uploadUrlTtlSeconds
    const signed = await this.deps.blobs.presignPut(uploadKey(noteId), { contentType, maxBytes: Math.min(declared ?? limits.maxFileBytes, limits.maxFileBytes), exactBytes: declared, expiresInSeconds: ttl })
    return {
      noteId,
      status: 'processing',
      upload: { method: 'PUT', url: signed.url, expiresInSeconds: ttl, headers: signed.headers },
      next: `PUT the file's bytes to upload.url with the given headers within ${ttl} seconds, then POST /v1/notes/${noteId}/finalize.`,
    }
  }

  private usage(caller: Caller, command: UsageCommand) {
    return this.deps.handler.handle(usageStream.of(caller.accountId), command, usageDecider, { metadata: { requestId: caller.requestId } })
  }

  /**
   * POST /v1/notes/{id}/finalize: binds the uploaded bytes (bindUpload), checks them, prices them
   * in minutes, queues the job.
   */
  async finalize(caller: Caller, noteId: string, body: { title?: string }): Promise<{ noteId: string; jobId: string; status: 'processing' }> {
    try {
      return await this.finalizeUpload(caller, noteId, body)
    } catch (err) {
      // The note keeps waiting for a better PUT; if none comes before the upload URL expires, it
      // fails with this refusal's code (workers/uploadExpiry.ts).
      if (isDomainError(err) && UPLOAD_REFUSALS.has(err.code)) {
        await this.deps.handler
          .handle(noteStream.of(noteId), { type: 'RefuseUpload', accountId: caller.accountId, errorCode: err.code, message: err.message, now: this.now() }, noteDecider)
          .catch(() => {})
      }
      throw err
    }
  }

  private async finalizeUpload(caller: Caller, noteId: string, body: { title?: string }): Promise<{ noteId: string; jobId: string; status: 'processing' }> {
    const stream = noteStream.of(noteId)
    const { state } = await this.deps.handler.load(stream, noteDecider)
    const note = ownedNote(state, caller.accountId)
    const jobId = uuidFromName(`job:${noteId}`, 'transcription')
    if (note.phase === 'awaiting_upload') await this.bindUpload(caller, noteId, note.upload?.declaredBytes ?? null, note.received?.blobKey ?? null)
    const { state: current } = await this.deps.handler.load(stream, noteDecider)
    const fresh = ownedNote(current, caller.accountId)
    // Storage and minutes are taken only for a note that will really be finalized now.
    if (fresh.phase === 'awaiting_upload' && fresh.received) {
      const limits = PLAN_LIMITS[caller.plan]
      const minutes = minutesFor(fresh.received.durationSeconds)
      await this.usage(caller, { type: 'AllocateStorage', noteId, bytes: fresh.received.sizeBytes, quota: limits.storageBytes, now: this.now() })
      try {
        await this.usage(caller, { type: 'ReserveMinutes', noteId, minutes, quota: limits.monthlyMinutes, now: this.now() })
        try {
          await this.run(caller, noteId, { type: 'FinalizeUpload', accountId: caller.accountId, jobId, title: body.title ?? null, minutes, blobKey: fresh.received.blobKey, now: this.now() })
        } catch (err) {
          await this.usage(caller, { type: 'ReleaseMinutes', noteId, reason: 'finalize refused', now: this.now() }).catch(() => {})
          throw err
        }
      } catch (err) {
        await this.usage(caller, { type: 'FreeStorage', noteId, reason: 'finalize refused', now: this.now() }).catch(() => {})
        throw err
      }
      // The note has its own copy now; what is left under the upload key is read by no one.
      if (fresh.received.blobKey !== uploadKey(noteId)) await this.deps.blobs.delete(uploadKey(noteId)).catch(() => {})
    } else {
      // Refused: the decider says why (not waiting for an upload, or no bytes yet).
      await this.run(caller, noteId, { type: 'FinalizeUpload', accountId: caller.accountId, jobId, title: body.title ?? null, minutes: 0, blobKey: null, now: this.now() })
    }
    return { noteId, jobId, status: 'processing' }
  }

  /**
   * Copies the bytes under the upload key, as they are at this moment, to a key of their own
   * (BlobStore.snapshot), checks that copy and records it as the note's upload. A PUT still
   * running when finalize runs (the local route, or a presigned S3 PUT nobody can stop) may land
   * on the upload key afterwards: it changes nothing the note uses, so what is transcribed is
   * exactly what was measured, priced and counted here. Each finalize binds afresh, so a PUT
   * after a refused finalize (415, 402, 413) is the one taken next time. Nothing under the upload
   * key: the earlier recorded upload, if any, stands.
   */
  private async bindUpload(caller: Caller, noteId: string, declared: number | null, previous: string | null): Promise<void> {
    const bound = boundUploadKey(noteId)
    const blob = await this.deps.blobs.snapshot(uploadKey(noteId), bound)
    if (!blob) return
    let recorded = false
    try {
      await this.refuseWrongSize(caller, uploadKey(noteId), blob.sizeBytes, declared)
      const { info, sha256 } = await this.deps.blobs.withLocalFile(bound, async (path) => ({ info: await this.deps.probe.probe(path), sha256: blob.sha256 ?? (await sha256OfFile(path)) }))
      if (!info || !info.hasAudio) {
        throw new DomainError('unsupported_media_type', info ? 'The uploaded file has no audio track.' : 'The uploaded bytes are not an audio or video file we can read; PUT a media file again.')
      }
      // Before any minute or credit is taken: the note keeps waiting for a shorter file.
      const maxSeconds = (this.deps.config.maxDurationSeconds ?? DEFAULT_MAX_DURATION_SECONDS)[caller.plan]
      if (shownSeconds(info.durationSeconds) > maxSeconds) {
        throw new DomainError('duration_limit_exceeded', durationLimitMessage(caller.plan, info.durationSeconds, maxSeconds), { maxDurationSeconds: maxSeconds, durationSeconds: Math.ceil(info.durationSeconds) })
      }
      await this.run(caller, noteId, { type: 'RecordUpload', accountId: caller.accountId, blobKey: bound, sizeBytes: blob.sizeBytes, contentType: blob.contentType, sha256, durationSeconds: info.durationSeconds, now: this.now() })
      recorded = true
    } finally {
      if (!recorded) await this.deps.blobs.delete(bound).catch(() => {})
    }
    // An upload recorded by an earlier, refused finalize is replaced: its copy goes.
    if (previous && previous !== uploadKey(noteId)) await this.deps.blobs.delete(previous).catch(() => {})
  }

  /**
   * The upload's real size against what the slot allowed. A presigned S3 URL binds an exact size
   * (fileSizeBytes) but cannot bind a maximum, so this is where the plan's limit holds for S3;
   * the local upload endpoint refuses such bodies already. Refused bytes are deleted, and the
   * note keeps waiting for a PUT that fits.
   */
  private async refuseWrongSize(caller: Caller, key: string, sizeBytes: number, declared: number | null) {
    const maxBytes = PLAN_LIMITS[caller.plan].maxFileBytes
    const allowed = Math.min(declared ?? maxBytes, maxBytes)
    if (sizeBytes > allowed) {
      await this.deps.blobs.delete(key)
      throw new DomainError(
        'file_too_large',
        declared !== null
          ? `The note was created for ${declared} bytes (fileSizeBytes); ${sizeBytes} were uploaded and have been deleted.`
          : `The ${caller.plan} plan accepts files up to ${maxBytes} bytes; ${sizeBytes} were uploaded and have been deleted.`,
        { maxBytes: allowed },
      )
    }
    if (declared !== null && sizeBytes !== declared) {
      await this.deps.blobs.delete(key)
      throw new DomainError('invalid_request', `The note was created for ${declared} bytes (fileSizeBytes); ${sizeBytes} were uploaded and have been deleted. PUT the whole file again.`)
    }
  }

  /**
   * DELETE /v1/notes/{id} (extension). The note ends (`NoteDeleted`, which carries no content);
   * its content key is destroyed, so the content of its events (sealed with that key, see
   * adapters/crypto/shreddingEventStore.ts) can never be read back; its files (upload, kept
   * media, deliverables) are deleted; every read model drops it, and the read-model store erases
   * the freed bytes. The credit history stays whole: ledger events name the note by id only. An
   * import still holding its 50 credits gets them back, an upload still counted its minutes and
   * storage. Another account's note, or an unknown id: 404 not_found.
   */
  async delete(caller: Caller, noteId: string): Promise<void> {
    const { state } = await this.deps.handler.load(noteStream.of(noteId), noteDecider)
    const note = ownedNote(state, caller.accountId)
    // The deliverables' files are found through their read model, before it drops them.
    const blobKeys = new Set<string>([uploadKey(noteId)])
    for (const key of [note.received?.blobKey, note.audio?.blobKey]) if (key) blobKeys.add(key)
    // A note whose read model has not caught up yet has no deliverables either (they need a ready note).
    const deliverables = await this.deps.deliverables.list(caller.accountId, noteId).catch(() => ({ items: [] }))
    for (const d of deliverables.items) {
      const file = await this.deps.deliverables.file(caller.accountId, noteId, d.id).catch(() => null)
      if (file) blobKeys.add(file.blobKey)
    }
    const result = await this.run(caller, noteId, { type: 'DeleteNote', accountId: caller.accountId, now: this.now() })
    // Before the key goes: the voice events that list this note's appearances are sealed with it.
    await this.deps.voice?.forgetNote(caller.accountId, noteId, caller.requestId)
    await this.deps.contentKeys.shred(noteId)
    for (const key of blobKeys) await this.deps.blobs.delete(key)
    const unfinished = note.phase !== 'ready' && note.phase !== 'failed'
    if (unfinished && note.reservationId) {
      const { state: ledger } = await this.deps.credits.state(caller.accountId)
      if (ledger.reservations[note.reservationId]) await this.deps.credits.release(caller.accountId, note.reservationId, 'note deleted').catch(() => {})
    }
    if (unfinished && note.sourceType === 'upload') await this.usage(caller, { type: 'ReleaseMinutes', noteId, reason: 'note deleted', now: this.now() })
    await this.usage(caller, { type: 'FreeStorage', noteId, reason: 'note deleted', now: this.now() })
    for (const name of NOTE_READ_MODELS) await this.deps.sync.waitFor(name, result.position)
    await this.deps.docs.eraseFreedSpace?.()
  }

  /** PATCH /v1/notes/{id}. */
  async edit(caller: Caller, noteId: string, patch: PatchNoteRequest): Promise<void> {
    if (patch.folderId) {
      const { state } = await this.deps.handler.load(folderStream.of(patch.folderId), folderDecider)
      ownedFolder(state, caller.accountId)
    }
    const changes = {
      ...(patch.title !== undefined ? { title: patch.title } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.folderId !== undefined ? { folderId: patch.folderId } : {}),
      ...(patch.tags !== undefined ? { tags: [...new Set(patch.tags)] } : {}),
      ...(patch.keepAudio !== undefined ? { keepAudio: patch.keepAudio } : {}),
    }
    await this.run(caller, noteId, { type: 'EditNote', accountId: caller.accountId, changes, now: this.now() })
  }
}
