// The voice-profiles read model, from `voice-<accountId>` streams: one consent document per
// account and one document per profile. No vector ever reaches a read model. Guarded by the
// stream revision kept on the consent document.
import { toDomainEvent, type RecordedEvent } from '../ports/eventStore.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { evolveVoice, voiceDecider, type VoiceEvent, type VoiceState } from '../domain/voice/voiceProfiles.ts'
import type { Projection } from './runner.ts'
import { atRevisionRead, replaceRead } from './revisionGuard.ts'
import { voiceStream } from '../domain/voice/voiceProfiles.ts'

export const VOICE_CONSENTS = 'voice_consents'
export const VOICE_PROFILES = 'voice_profiles'

export interface VoiceConsentDoc {
  _id: string
  [key: string]: unknown
  status: VoiceState['consent']['status']
  consentVersion: string | null
  grantedAt: string | null
  revokedAt: string | null
  revision: number
}

export interface VoiceProfileDoc {
  _id: string
  [key: string]: unknown
  accountId: string
  name: string
  /** `noteId:label` of every confirmed appearance. */
  appearances: string[]
  voiceSeconds: number
  hasVoiceprint: boolean
  voiceExcluded: boolean
  originNoteId?: string | null
  createdAt: string
  /** Revision of the account's voice stream last applied to this profile (the guard of its writes). */
  revision?: number
}

export const voiceProfilesProjection: Projection = {
  name: 'voice-profiles',
  filter: { categories: ['voice'] },
  collections: [VOICE_CONSENTS, VOICE_PROFILES],
  async setup(docs) {
    await docs.collection(VOICE_PROFILES).createIndex({ keys: { accountId: 1, name: 1 }, name: 'by_account_name' })
  },
  async handle(events, docs) {
    for (const e of events) await apply(e, docs)
  },
}

async function apply(recorded: RecordedEvent, docs: DocumentStore) {
  const e = toDomainEvent<VoiceEvent>(recorded)
  const accountId = voiceStream.idOf(recorded.streamName)
  const consents = docs.collection<VoiceConsentDoc>(VOICE_CONSENTS)
  const profiles = docs.collection<VoiceProfileDoc>(VOICE_PROFILES)
  const consent = await consents.findOne({ _id: accountId })
  if (consent && consent.revision >= recorded.revision) return
  // Fold this one event over the stored state of the profiles it touches.
  const touched = 'profileId' in e.data ? [e.data.profileId] : 'profileIds' in e.data ? e.data.profileIds : 'profiles' in e.data ? e.data.profiles.map((p) => p.profileId) : []
  const stored = touched.length ? await profiles.find({ _id: { $in: touched } }) : []
  const before: VoiceState = {
    consent: consent
      ? { status: consent.status, consentVersion: consent.consentVersion, grantedAt: consent.grantedAt, revokedAt: consent.revokedAt }
      : voiceDecider.initialState().consent,
    profiles: Object.fromEntries(
      stored.map((p) => [
        p._id,
        { profileId: p._id, name: p.name, appearances: p.appearances, voiceSeconds: p.voiceSeconds, hasVoiceprint: p.hasVoiceprint, voiceExcluded: p.voiceExcluded, originNoteId: p.originNoteId ?? null },
      ]),
    ),
  }
  const after = evolveVoice(before, e)
  for (const id of touched) {
    const p = after.profiles[id]
    const prev = stored.find((s) => s._id === id)
    // Removed with the note it came from (VoiceNoteForgotten): its name leaves the read model.
    if (!p) {
      if (prev) await profiles.deleteOne(atRevisionRead(prev))
      continue
    }
    // Each write over what was read only (projections/revisionGuard.ts): a late instance, which
    // read an older profile or consent, changes nothing.
    await replaceRead(profiles, prev ?? null, {
      _id: id,
      accountId,
      name: p.name,
      appearances: p.appearances,
      voiceSeconds: p.voiceSeconds,
      hasVoiceprint: p.hasVoiceprint,
      voiceExcluded: p.voiceExcluded,
      originNoteId: p.originNoteId ?? null,
      createdAt: prev?.createdAt ?? e.data.at,
      revision: recorded.revision,
    })
  }
  await replaceRead(consents, consent, { _id: accountId, ...after.consent, revision: recorded.revision })
}
