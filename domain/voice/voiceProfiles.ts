// Voice profiles of one account, stream `voice-<accountId>`: the biometric consent and the
// profiles (a name, how often and how long the person was confirmed, whether a voiceprint
// exists). The voiceprint vectors themselves are never in an event: events are forwarded to
// analytics and cannot be erased, and a revoked consent must erase the prints. They live in a
// private vault; events only record that one was enrolled or deleted.
//
// Consent (spec part 3): `never` (no grant ever), `granted`, `revoked`, `outdated` (granted under
// an older consent text than CURRENT_CONSENT_VERSION: it must be accepted again in the app or
// web, and nothing is analysed meanwhile). A grant comes only from the dashboard, never through
// an API key.
//
// Deleting a note (issue 26, item 4): a profile's name and appearances were typed for, or taken
// from, notes. The events that carry them name their note (`noteId`), so the event store seals
// them with that note's content key and deleting the note shreds them. `ForgetNoteVoices` then
// decides what is left: a profile every appearance of which came from the deleted note goes
// whole (`removed`); one that also appears in other notes keeps its name (given there too) and
// loses its voiceprint, which was averaged over the deleted audio (`print_deleted`; it is
// enrolled again when a name is confirmed); one without a print only loses that note's
// appearances (`trimmed`).
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import { streamKind } from '../streams.ts'

export const voiceStream = streamKind('voice')

/** The consent text in force. A grant of any other version reads as `outdated`. */
export const CURRENT_CONSENT_VERSION = '2026-01'

export type ConsentStatus = 'granted' | 'revoked' | 'never' | 'outdated'

type At = { at: string }
export type VoiceConsentGranted = DomainEvent<'VoiceConsentGranted', { consentVersion: string; via: 'dashboard' } & At>
export type VoiceConsentRevoked = DomainEvent<'VoiceConsentRevoked', { via: string } & At>
/** `noteId`: the note whose confirmed speaker name created the profile (sealed under its key). */
export type VoiceProfileCreated = DomainEvent<'VoiceProfileCreated', { profileId: string; name: string; noteId?: string } & At>
/** `name`: the name confirmed in that note, so the profile survives the shredding of the note that created it. */
export type VoiceprintEnrolled = DomainEvent<'VoiceprintEnrolled', { profileId: string; noteId: string; label: string; voiceSeconds: number; model: string; name?: string } & At>
export type VoiceProfileExclusionChanged = DomainEvent<'VoiceProfileExclusionChanged', { profileId: string; excluded: boolean } & At>
/** Records that the vault erased these profiles' voiceprints. */
export type VoiceprintsDeleted = DomainEvent<'VoiceprintsDeleted', { profileIds: string[]; reason: 'consent_revoked' | 'profile_excluded' | 'note_deleted' } & At>

export type ForgottenOutcome = 'removed' | 'print_deleted' | 'trimmed'
/** A note was deleted: what became of the profiles it contributed to. Names no note in `noteId` (its key is gone). */
export type VoiceNoteForgotten = DomainEvent<'VoiceNoteForgotten', { deletedNoteId: string; profiles: { profileId: string; outcome: ForgottenOutcome }[] } & At>

export type VoiceEvent = VoiceConsentGranted | VoiceConsentRevoked | VoiceProfileCreated | VoiceprintEnrolled | VoiceProfileExclusionChanged | VoiceprintsDeleted | VoiceNoteForgotten

export const VOICE_EVENT_TYPES: readonly VoiceEvent['type'][] = [
  'VoiceConsentGranted',
  'VoiceConsentRevoked',
  'VoiceProfileCreated',
  'VoiceprintEnrolled',
  'VoiceProfileExclusionChanged',
  'VoiceprintsDeleted',
  'VoiceNoteForgotten',
]

export type Via = 'rest' | 'mcp' | 'dashboard' | 'admin'

export type VoiceCommand =
  | { type: 'GrantVoiceConsent'; via: Via; consentVersion: string; now: string }
  | { type: 'RevokeVoiceConsent'; via: Via; deletedProfileIds: string[]; now: string }
  | { type: 'EnrollVoiceprint'; profileId: string; name: string; noteId: string; label: string; voiceSeconds: number; model: string; now: string }
  | { type: 'SetProfileVoiceExclusion'; profileId: string; excluded: boolean; now: string }
  | { type: 'ForgetNoteVoices'; noteId: string; now: string }
  /** A print was merged with the audio of a note deleted meanwhile: the vault erased it. */
  | { type: 'DeleteVoiceprints'; profileIds: string[]; reason: 'note_deleted'; now: string }

export interface VoiceProfileState {
  profileId: string
  name: string
  appearances: string[]
  voiceSeconds: number
  hasVoiceprint: boolean
  voiceExcluded: boolean
  /** The note whose confirmed name created the profile (null: unknown, or that note was deleted). */
  originNoteId?: string | null
}

export interface VoiceState {
  consent: { status: 'never' | 'granted' | 'revoked'; consentVersion: string | null; grantedAt: string | null; revokedAt: string | null }
  profiles: Readonly<Record<string, VoiceProfileState>>
}

export const consentStatusOf = (c: VoiceState['consent'], current = CURRENT_CONSENT_VERSION): ConsentStatus =>
  c.status === 'granted' && c.consentVersion !== current ? 'outdated' : c.status

/** Whether voices may be analysed and matched now. */
export const consentInForce = (s: VoiceState) => consentStatusOf(s.consent) === 'granted'

export const findProfileByName = (s: VoiceState, name: string) =>
  Object.values(s.profiles).find((p) => p.name.localeCompare(name, undefined, { sensitivity: 'base' }) === 0) ?? null

export function evolveVoice(s: VoiceState, e: VoiceEvent): VoiceState {
  const profile = (id: string) => s.profiles[id]!
  // The profile's creation may have been shredded with its note: events about it then change nothing.
  if (('profileId' in e.data && e.type !== 'VoiceProfileCreated' && e.type !== 'VoiceprintEnrolled' && !s.profiles[e.data.profileId])) return s
  switch (e.type) {
    case 'VoiceConsentGranted':
      return { ...s, consent: { status: 'granted', consentVersion: e.data.consentVersion, grantedAt: e.data.at, revokedAt: null } }
    case 'VoiceConsentRevoked':
      return { ...s, consent: { ...s.consent, status: 'revoked', revokedAt: e.data.at } }
    case 'VoiceProfileCreated':
      return {
        ...s,
        profiles: { ...s.profiles, [e.data.profileId]: newProfile(e.data.profileId, e.data.name, e.data.noteId ?? null) },
      }
    case 'VoiceprintEnrolled': {
      if (!s.profiles[e.data.profileId] && !e.data.name) return s
      const p = s.profiles[e.data.profileId] ?? newProfile(e.data.profileId, e.data.name!, null)
      const appearance = `${e.data.noteId}:${e.data.label}`
      return {
        ...s,
        profiles: {
          ...s.profiles,
          [p.profileId]: {
            ...p,
            appearances: p.appearances.includes(appearance) ? p.appearances : [...p.appearances, appearance],
            voiceSeconds: Math.round((p.voiceSeconds + e.data.voiceSeconds) * 1000) / 1000,
            hasVoiceprint: true,
          },
        },
      }
    }
    case 'VoiceProfileExclusionChanged':
      return { ...s, profiles: { ...s.profiles, [e.data.profileId]: { ...profile(e.data.profileId), voiceExcluded: e.data.excluded } } }
    case 'VoiceprintsDeleted': {
      const profiles = { ...s.profiles }
      for (const id of e.data.profileIds) if (profiles[id]) profiles[id] = { ...profiles[id]!, hasVoiceprint: false, voiceSeconds: 0 }
      return { ...s, profiles }
    }
    case 'VoiceNoteForgotten': {
      const profiles = { ...s.profiles }
      const fromIt = (a: string) => a.startsWith(`${e.data.deletedNoteId}:`)
      for (const { profileId, outcome } of e.data.profiles) {
        const p = profiles[profileId]
        if (!p) continue
        if (outcome === 'removed') delete profiles[profileId]
        else
          profiles[profileId] = {
            ...p,
            appearances: p.appearances.filter((a) => !fromIt(a)),
            originNoteId: p.originNoteId === e.data.deletedNoteId ? null : (p.originNoteId ?? null),
            ...(outcome === 'print_deleted' ? { hasVoiceprint: false, voiceSeconds: 0 } : {}),
          }
      }
      return { ...s, profiles }
    }
  }
}

const newProfile = (profileId: string, name: string, originNoteId: string | null): VoiceProfileState => ({
  profileId,
  name,
  appearances: [],
  voiceSeconds: 0,
  hasVoiceprint: false,
  voiceExcluded: false,
  originNoteId,
})

/** What deleting `noteId` leaves of each profile it contributed to (see the head of this file). */
function forgetNote(s: VoiceState, noteId: string): { profileId: string; outcome: ForgottenOutcome }[] {
  const out: { profileId: string; outcome: ForgottenOutcome }[] = []
  for (const p of Object.values(s.profiles)) {
    const fromIt = p.appearances.filter((a) => a.startsWith(`${noteId}:`)).length
    if (fromIt === 0 && p.originNoteId !== noteId) continue
    const outcome: ForgottenOutcome = fromIt === p.appearances.length ? 'removed' : p.hasVoiceprint ? 'print_deleted' : 'trimmed'
    out.push({ profileId: p.profileId, outcome })
  }
  return out
}

export function decideVoice(c: VoiceCommand, s: VoiceState): VoiceEvent[] {
  switch (c.type) {
    case 'GrantVoiceConsent': {
      // Biometric consent is given by a person in the app or on the web, never by a key.
      if (c.via !== 'dashboard') {
        throw new DomainError('consent_requires_app', 'Biometric consent cannot be granted with an API key; the account owner grants it in the app or on the web dashboard.')
      }
      if (s.consent.status === 'granted' && s.consent.consentVersion === c.consentVersion) return []
      return [{ type: 'VoiceConsentGranted', data: { consentVersion: c.consentVersion, via: 'dashboard', at: c.now } }]
    }
    case 'RevokeVoiceConsent': {
      const withPrints = Object.values(s.profiles).filter((p) => p.hasVoiceprint).map((p) => p.profileId)
      const events: VoiceEvent[] = []
      if (s.consent.status === 'granted') events.push({ type: 'VoiceConsentRevoked', data: { via: c.via, at: c.now } })
      const deleted = [...new Set([...withPrints, ...c.deletedProfileIds.filter((id) => s.profiles[id]?.hasVoiceprint)])]
      if (deleted.length > 0) events.push({ type: 'VoiceprintsDeleted', data: { profileIds: deleted, reason: 'consent_revoked', at: c.now } })
      return events
    }
    case 'EnrollVoiceprint': {
      if (!consentInForce(s)) throw new DomainError('conflict', 'Voices are analysed only with biometric consent in force.')
      const existing = s.profiles[c.profileId] ?? findProfileByName(s, c.name)
      if (existing?.voiceExcluded) throw new DomainError('conflict', `${existing.name} is marked 'do not recognise this person'.`)
      const events: VoiceEvent[] = []
      const profileId = existing?.profileId ?? c.profileId
      if (!existing) events.push({ type: 'VoiceProfileCreated', data: { profileId, name: c.name, noteId: c.noteId, at: c.now } })
      // The same appearance twice changes nothing, unless its print was deleted meanwhile.
      if (existing?.hasVoiceprint && existing.appearances.includes(`${c.noteId}:${c.label}`)) return events
      events.push({ type: 'VoiceprintEnrolled', data: { profileId, noteId: c.noteId, label: c.label, voiceSeconds: c.voiceSeconds, model: c.model, name: existing?.name ?? c.name, at: c.now } })
      return events
    }
    case 'DeleteVoiceprints': {
      const profileIds = c.profileIds.filter((id) => s.profiles[id]?.hasVoiceprint)
      return profileIds.length > 0 ? [{ type: 'VoiceprintsDeleted', data: { profileIds, reason: c.reason, at: c.now } }] : []
    }
    case 'ForgetNoteVoices': {
      const profiles = forgetNote(s, c.noteId)
      return profiles.length > 0 ? [{ type: 'VoiceNoteForgotten', data: { deletedNoteId: c.noteId, profiles, at: c.now } }] : []
    }
    case 'SetProfileVoiceExclusion': {
      const p = s.profiles[c.profileId]
      if (!p) throw new DomainError('not_found', 'No voice profile with that id belongs to you.')
      if (p.voiceExcluded === c.excluded) return []
      const events: VoiceEvent[] = [{ type: 'VoiceProfileExclusionChanged', data: { profileId: p.profileId, excluded: c.excluded, at: c.now } }]
      // An excluded profile keeps only its name.
      if (c.excluded && p.hasVoiceprint) events.push({ type: 'VoiceprintsDeleted', data: { profileIds: [p.profileId], reason: 'profile_excluded', at: c.now } })
      return events
    }
  }
}

export const voiceDecider: Decider<VoiceCommand, VoiceEvent, VoiceState> = {
  decide: decideVoice,
  evolve: evolveVoice,
  initialState: () => ({ consent: { status: 'never', consentVersion: null, grantedAt: null, revokedAt: null }, profiles: {} }),
}

// ---- vectors ----------------------------------------------------------------------------------

export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return 0
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  if (na === 0 || nb === 0) return 0
  return dot / Math.sqrt(na * nb)
}

/** Running mean of voiceprints, weighted by seconds of voice, unit length. */
export function mergeVoiceprints(old: Float32Array | null, oldSeconds: number, add: Float32Array, addSeconds: number): Float32Array {
  const out = new Float32Array(add.length)
  const wo = old && old.length === add.length ? Math.max(oldSeconds, 0) : 0
  const wa = Math.max(addSeconds, 1e-6)
  for (let i = 0; i < add.length; i++) out[i] = ((old && wo > 0 ? old[i]! * wo : 0) + add[i]! * wa) / (wo + wa)
  let n = 0
  for (const v of out) n += v * v
  n = Math.sqrt(n) || 1
  for (let i = 0; i < out.length; i++) out[i] = out[i]! / n
  return out
}
