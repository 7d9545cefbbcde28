// Voice profiles: consent (granted only from the dashboard; revoking erases every voiceprint),
// 'do not recognise this person' on a profile, and the voice work itself: matching a ready
// note's speakers against the profiles, and enrolling a speaker whose name the user confirmed.
// Voiceprint vectors live in a private vault (blobs under `voiceprints/`), never in events or
// read models, and no route returns them.
import { randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import { DomainError, isDomainError } from '../domain/errors.ts'
import { CONSENT_TEXTS, currentConsentText, type ConsentText } from '../domain/voice/consentText.ts'
import { noteDecider, noteStream } from '../domain/notes/note.ts'
import { noteTranscriptDecider } from '../domain/notes/noteTranscript.ts'
import {
  consentInForce,
  cosineSimilarity,
  CURRENT_CONSENT_VERSION,
  findProfileByName,
  mergeVoiceprints,
  voiceDecider,
  voiceStream,
  type VoiceCommand,
  type VoiceState,
} from '../domain/voice/voiceProfiles.ts'
import type { BlobStore } from '../ports/blobStore.ts'
import type { SpeakerEmbedder } from '../ports/speakerEmbedder.ts'
import type { ReadModelSync } from '../projections/sync.ts'
import type { VoiceReads } from './reads.ts'
import type { VoiceProfiles } from '../contract/transcripts.ts'
import type { CommandHandler } from './handleCommand.ts'
import type { Caller } from './context.ts'

type Without<C, K extends string> = C extends unknown ? Omit<C, K> : never

/** The private store of voiceprints: one Float32 vector per profile. */
export class VoiceprintVault {
  constructor(private readonly blobs: BlobStore) {}

  private key = (accountId: string, profileId: string) => `voiceprints/${accountId}/${profileId}.f32`

  async get(accountId: string, profileId: string): Promise<Float32Array | null> {
    const key = this.key(accountId, profileId)
    if (!(await this.blobs.stat(key))) return null
    const chunks: Buffer[] = []
    try {
      for await (const c of await this.blobs.read(key)) chunks.push(c as Buffer)
    } catch (err) {
      // Deleted meanwhile (consent revoked, profile excluded): there is no print.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
    const buf = Buffer.concat(chunks)
    return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length))
  }

  async put(accountId: string, profileId: string, vector: Float32Array): Promise<void> {
    const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)
    await this.blobs.put(this.key(accountId, profileId), Readable.from([bytes]), { contentType: 'application/octet-stream', maxBytes: bytes.length })
  }

  async delete(accountId: string, profileId: string): Promise<void> {
    await this.blobs.delete(this.key(accountId, profileId))
  }
}

export interface VoiceCommandsDeps {
  handler: CommandHandler
  reads: VoiceReads
  sync: ReadModelSync
  blobs: BlobStore
  /** Null when no speaker-embedding model is configured: no voice matching. */
  embedder: SpeakerEmbedder | null
  /** Why there is no embedder (shown by GET /v1/voice-profiles). */
  embedderUnavailable: string | null
  /** Lowest cosine similarity that counts as a resemblance. */
  matchThreshold: number
  clock?: () => Date
}

/** At most this much of one speaker's speech is analysed per note. */
const MAX_ANALYSED_MS = 90_000

export class VoiceCommands {
  readonly vault: VoiceprintVault
  private readonly clock: () => Date
  constructor(private readonly deps: VoiceCommandsDeps) {
    this.vault = new VoiceprintVault(deps.blobs)
    this.clock = deps.clock ?? (() => new Date())
  }

  get matching(): { available: boolean; reason: string | null } {
    return this.deps.embedder ? { available: true, reason: null } : { available: false, reason: this.deps.embedderUnavailable ?? 'no speaker-embedding model is configured (SPEAKER_EMBEDDING_MODEL)' }
  }

  private async run(accountId: string, c: Without<VoiceCommand, 'now'>, requestId?: string) {
    const r = await this.deps.handler.handle(voiceStream.of(accountId), { ...c, now: this.clock().toISOString() } as VoiceCommand, voiceDecider, {
      metadata: requestId ? { requestId } : { actor: 'voice-worker' },
    })
    await this.deps.sync.waitFor('voice-profiles', r.position)
    return r
  }

  private state(accountId: string): Promise<VoiceState> {
    return this.deps.handler.load(voiceStream.of(accountId), voiceDecider).then((r) => r.state)
  }

  profiles(caller: Caller): Promise<VoiceProfiles> {
    return this.deps.reads.profiles(caller.accountId, this.matching)
  }

  /** The dashboard's grant; refused for any other caller (an API key can never grant it). */
  async grantConsent(caller: Caller, consentVersion: string = CURRENT_CONSENT_VERSION): Promise<VoiceProfiles> {
    await this.run(caller.accountId, { type: 'GrantVoiceConsent', via: caller.via, consentVersion }, caller.requestId)
    return this.profiles(caller)
  }

  /**
   * The dashboard's consent screen: the text in force, and the version this account agreed to
   * (so an `outdated` consent can show what changed).
   */
  async consentScreen(caller: Caller): Promise<VoiceProfiles & { consentText: ConsentText; grantedVersion: string | null; grantedText: ConsentText | null }> {
    const [profiles, s] = await Promise.all([this.profiles(caller), this.state(caller.accountId)])
    const grantedVersion = s.consent.status === 'granted' ? s.consent.consentVersion : null
    return { ...profiles, consentText: currentConsentText(), grantedVersion, grantedText: grantedVersion ? (CONSENT_TEXTS[grantedVersion] ?? null) : null }
  }

  /** A person accepts the text they were shown; a text that is no longer current is refused, so nobody consents to words they did not read. */
  async acceptConsentText(caller: Caller, consentVersion: string): Promise<VoiceProfiles> {
    if (consentVersion !== CURRENT_CONSENT_VERSION) {
      throw new DomainError('conflict', `The consent text changed (now version ${CURRENT_CONSENT_VERSION}); read the new text and accept it.`, { currentVersion: CURRENT_CONSENT_VERSION })
    }
    return this.grantConsent(caller, consentVersion)
  }

  /** Revoking erases every voiceprint from the vault, then records it (VoiceprintsDeleted). */
  async revokeConsent(caller: Caller): Promise<VoiceProfiles> {
    const s = await this.state(caller.accountId)
    const withPrints = Object.values(s.profiles).filter((p) => p.hasVoiceprint).map((p) => p.profileId)
    for (const id of withPrints) await this.vault.delete(caller.accountId, id)
    await this.run(caller.accountId, { type: 'RevokeVoiceConsent', via: caller.via, deletedProfileIds: withPrints }, caller.requestId)
    return this.profiles(caller)
  }

  /**
   * 'Do not recognise this person' on a profile: it keeps only its name, and every speaker
   * already matched to it or enrolled from it is excluded too (its voice name and evidence go;
   * it is never analysed or matched again). Repeating it reaches any speaker a failed run missed.
   */
  async setProfileExclusion(caller: Caller, profileId: string, excluded: boolean): Promise<VoiceProfiles> {
    const s = await this.state(caller.accountId)
    if (excluded && s.profiles[profileId]?.hasVoiceprint) await this.vault.delete(caller.accountId, profileId)
    await this.run(caller.accountId, { type: 'SetProfileVoiceExclusion', profileId, excluded }, caller.requestId)
    if (excluded) await this.reachSpeakers(caller, profileId, s.profiles[profileId]?.appearances ?? [])
    return this.profiles(caller)
  }

  private async reachSpeakers(caller: Caller, profileId: string, appearances: readonly string[]) {
    const enrolled = new Map<string, string[]>()
    for (const a of appearances) {
      const i = a.indexOf(':')
      const noteId = a.slice(0, i)
      enrolled.set(noteId, [...(enrolled.get(noteId) ?? []), a.slice(i + 1)])
    }
    const notes = new Set([...enrolled.keys(), ...(await this.deps.reads.notesMatchedTo(caller.accountId, profileId))])
    let position: number | null = null
    for (const noteId of notes) {
      const r = await this.deps.handler.handle(
        noteStream.of(noteId),
        { type: 'ExcludeProfileVoice', profileId, enrolledLabels: enrolled.get(noteId) ?? [], now: this.clock().toISOString() },
        noteTranscriptDecider,
        { metadata: { requestId: caller.requestId, accountId: caller.accountId } },
      )
      if (r.events.length > 0) position = r.position
    }
    if (position !== null) await this.deps.sync.waitFor('speakers', position)
  }

  /**
   * A note is being deleted (docs/speech.md, "Deleting a note"): what its audio and its confirmed names
   * gave the voice profiles goes. Prints averaged over its audio are erased from the vault first,
   * then `VoiceNoteForgotten` records it; a removed profile's voice matches on other notes are
   * cleared (they quote its name). Runs while the note's key still opens the events that list
   * its appearances, i.e. before the key is shredded. Idempotent.
   */
  async forgetNote(accountId: string, noteId: string, requestId?: string): Promise<void> {
    const s = await this.state(accountId)
    const decided = voiceDecider.decide({ type: 'ForgetNoteVoices', noteId, now: this.clock().toISOString() }, s)
    const outcomes = decided.flatMap((e) => (e.type === 'VoiceNoteForgotten' ? e.data.profiles : []))
    if (outcomes.length === 0) return
    for (const { profileId } of outcomes) if (s.profiles[profileId]?.hasVoiceprint) await this.vault.delete(accountId, profileId)
    const removed = outcomes.filter((o) => o.outcome === 'removed').map((o) => o.profileId)
    const matchedElsewhere = new Map<string, string[]>()
    for (const profileId of removed) {
      for (const other of await this.deps.reads.notesMatchedTo(accountId, profileId)) if (other !== noteId) matchedElsewhere.set(other, [...(matchedElsewhere.get(other) ?? []), profileId])
    }
    await this.run(accountId, { type: 'ForgetNoteVoices', noteId }, requestId)
    let position: number | null = null
    for (const [other, profileIds] of matchedElsewhere) {
      const { state: t } = await this.deps.handler.load(noteStream.of(other), noteTranscriptDecider)
      if (!t.exists) continue
      for (const [label, speaker] of Object.entries(t.speakers)) {
        if (!speaker.voice || !profileIds.includes(speaker.voice.profileId)) continue
        const r = await this.deps.handler.handle(noteStream.of(other), { type: 'RecordVoiceMatch', label, match: null, now: this.clock().toISOString() }, noteTranscriptDecider, {
          metadata: requestId ? { requestId, accountId } : { actor: 'voice-worker' },
        })
        if (r.events.length > 0) position = r.position
      }
    }
    if (position !== null) await this.deps.sync.waitFor('speakers', position)
  }

  // ---- voice work (the voice worker calls these) -------------------------------------------

  /** Audio of a note and the speech ranges of one speaker, if both exist. */
  private async speakerAudio(noteId: string, label: string) {
    const [{ state: note }, { state: t }] = await Promise.all([this.deps.handler.load(noteStream.of(noteId), noteDecider), this.deps.handler.load(noteStream.of(noteId), noteTranscriptDecider)])
    if (!note.exists || !t.exists || !t.transcript) return null
    const blobKey = note.received?.blobKey
    if (!blobKey) return null
    const ranges: { startMs: number; endMs: number }[] = []
    let total = 0
    for (const s of [...t.transcript.segments].sort((a, b) => a.sequence - b.sequence)) {
      if (s.speakerLabel !== label || total >= MAX_ANALYSED_MS) continue
      ranges.push({ startMs: s.startMs, endMs: s.endMs })
      total += s.endMs - s.startMs
    }
    return ranges.length ? { accountId: t.accountId, blobKey, ranges, speaker: t.speakers[label] } : null
  }

  private async embed(noteId: string, label: string) {
    if (!this.deps.embedder) return null
    const audio = await this.speakerAudio(noteId, label)
    // A speaker marked 'do not recognise this person' is never analysed.
    if (!audio || audio.speaker?.voiceExcluded) return null
    const embedding = await this.deps.blobs.withLocalFile(audio.blobKey, (path) => this.deps.embedder!.embed(path, audio.ranges))
    return embedding && { ...embedding, accountId: audio.accountId }
  }

  /** Compares each speaker of a ready note with the account's profiles and records resemblances. */
  async matchNote(noteId: string): Promise<number> {
    const { state: t } = await this.deps.handler.load(noteStream.of(noteId), noteTranscriptDecider)
    if (!this.deps.embedder || !t.exists || !t.transcript) return 0
    const voice = await this.state(t.accountId)
    if (!consentInForce(voice)) return 0
    const profiles = Object.values(voice.profiles).filter((p) => p.hasVoiceprint && !p.voiceExcluded)
    if (profiles.length === 0) return 0
    const prints = new Map<string, Float32Array>()
    for (const p of profiles) {
      const v = await this.vault.get(t.accountId, p.profileId)
      if (v) prints.set(p.profileId, v)
    }
    let matched = 0
    for (const label of Object.keys(t.speakers)) {
      const e = await this.embed(noteId, label)
      if (!e) continue
      let best: { profileId: string; profileName: string; similarity: number } | null = null
      for (const p of profiles) {
        const v = prints.get(p.profileId)
        if (!v) continue
        const similarity = Math.max(0, Math.min(1, cosineSimilarity(e.vector, v)))
        if (!best || similarity > best.similarity) best = { profileId: p.profileId, profileName: p.name, similarity: Math.round(similarity * 1000) / 1000 }
      }
      const match = best && best.similarity >= this.deps.matchThreshold ? best : null
      await this.deps.handler.handle(noteStream.of(noteId), { type: 'RecordVoiceMatch', label, match, now: this.clock().toISOString() }, noteTranscriptDecider, { metadata: { actor: 'voice-worker' } })
      if (!match) continue
      // The profile went with a deleted note while this voice was compared: the match quoting its name goes too.
      if (!(await this.state(t.accountId)).profiles[match.profileId]) {
        await this.deps.handler.handle(noteStream.of(noteId), { type: 'RecordVoiceMatch', label, match: null, now: this.clock().toISOString() }, noteTranscriptDecider, { metadata: { actor: 'voice-worker' } })
      } else matched++
    }
    return matched
  }

  /** Adds a confirmed speaker's voice to the profile of that name (created if needed). */
  async enroll(noteId: string, label: string, name: string): Promise<boolean> {
    const { state: t } = await this.deps.handler.load(noteStream.of(noteId), noteTranscriptDecider)
    if (!this.deps.embedder || !t.exists) return false
    const voice = await this.state(t.accountId)
    if (!consentInForce(voice)) return false
    const existing = findProfileByName(voice, name)
    if (existing?.voiceExcluded) return false
    const e = await this.embed(noteId, label)
    if (!e) return false
    const profileId = existing?.profileId ?? randomUUID()
    const old = existing?.hasVoiceprint ? await this.vault.get(t.accountId, profileId) : null
    await this.vault.put(t.accountId, profileId, mergeVoiceprints(old, existing?.voiceSeconds ?? 0, e.vector, e.voiceSeconds))
    try {
      await this.run(t.accountId, { type: 'EnrollVoiceprint', profileId, name, noteId, label, voiceSeconds: Math.round(e.voiceSeconds * 1000) / 1000, model: this.deps.embedder.model })
    } catch (err) {
      // The note was deleted meanwhile (its key is gone): the print now holds its audio.
      if (isDomainError(err) && err.code === 'not_found') return this.dropPrint(t.accountId, profileId)
      // Consent revoked meanwhile: the print just written must not survive.
      if (!existing?.hasVoiceprint) await this.vault.delete(t.accountId, profileId)
      if (isDomainError(err)) return false
      throw err
    }
    // Deleted after the enrolment was recorded but before its forgetting could see it: the same.
    const { state: after } = await this.deps.handler.load(noteStream.of(noteId), noteDecider)
    if (!after.exists) return this.dropPrint(t.accountId, profileId)
    return true
  }

  /** Erases a print averaged over audio of a deleted note, and records it. */
  private async dropPrint(accountId: string, profileId: string): Promise<false> {
    await this.vault.delete(accountId, profileId)
    await this.run(accountId, { type: 'DeleteVoiceprints', profileIds: [profileId], reason: 'note_deleted' })
    return false
  }
}
