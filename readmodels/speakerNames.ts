// The one place a diarization label becomes a name: the speakers read model viewed by the naming
// rules of domain/speakers/speakers.ts (docs/speech.md, "Speakers"). The transcript and its exports, the
// timeline, the sources the language engines read (analyses, outline, deliverables), the
// passages answers quote, the webhooks and the dashboard all read names here; none keeps a copy.
// Voice evidence counts only while the owner's biometric consent is in force.
import { consentStatusOf, CURRENT_CONSENT_VERSION } from '../domain/voice/voiceProfiles.ts'
import { emptySpeaker, speakerNameOf, viewSpeakers, type SpeakerNames, type SpeakerView } from '../domain/speakers/speakers.ts'
import type { SpokenBy } from '../domain/language/content.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import { SPEAKERS, type SpeakersDoc } from '../projections/speakers.ts'
import { VOICE_CONSENTS, type VoiceConsentDoc } from '../projections/voiceProfiles.ts'

export type SpeakerViewWithStats = SpeakerView & { speechSeconds: number | null; segmentCount: number | null; diarizationConfidence: number | null }

/** Whether voice evidence may be shown: only while the owner's consent is in force. */
async function voiceConsentInForce(docs: DocumentStore, accountId: string): Promise<boolean> {
  const c = await docs.collection<VoiceConsentDoc>(VOICE_CONSENTS).findOne({ _id: accountId })
  return !!c && consentStatusOf(c, CURRENT_CONSENT_VERSION) === 'granted'
}

/** The speakers of one note, viewed together (so one person's name goes to one speaker), in the transcript's label order. */
function viewsOf(doc: SpeakersDoc, consent: boolean): Map<string, SpeakerViewWithStats> {
  const states = doc.stats.map((st) => {
    const state = doc.speakers[st.label] ?? emptySpeaker(st.label)
    return consent ? state : { ...state, voice: null }
  })
  const all = viewSpeakers(states)
  return new Map(doc.stats.map((st, i) => [st.label, { ...all[i]!, speechSeconds: st.speechSeconds, segmentCount: st.segmentCount, diarizationConfidence: st.confidence ?? null }]))
}

/** The speakers of the caller's notes by note id; a note that is not the caller's (or has no transcript yet) has none. */
export async function speakerViewsOf(docs: DocumentStore, accountId: string, noteIds: readonly string[]): Promise<Map<string, Map<string, SpeakerViewWithStats>>> {
  const out = new Map<string, Map<string, SpeakerViewWithStats>>()
  if (noteIds.length === 0) return out
  const [found, consent] = await Promise.all([
    noteIds.length === 1
      ? docs.collection<SpeakersDoc>(SPEAKERS).findOne({ _id: noteIds[0]!, accountId }).then((d) => (d ? [d] : []))
      : docs.collection<SpeakersDoc>(SPEAKERS).find({ _id: { $in: [...noteIds] }, accountId }, { projection: { stats: 1, speakers: 1 } }),
    voiceConsentInForce(docs, accountId),
  ])
  for (const doc of found) out.set(doc._id, viewsOf(doc, consent))
  return out
}

/** The speaker names of the caller's notes by note id, each by label. */
export async function speakerNamesOf(docs: DocumentStore, accountId: string, noteIds: readonly string[]): Promise<Map<string, SpeakerNames>> {
  const views = await speakerViewsOf(docs, accountId, noteIds)
  return new Map([...views].map(([noteId, byLabel]) => [noteId, new Map([...byLabel.values()].map((v) => [v.label, speakerNameOf(v)]))]))
}

/** Who says a segment of label `label`: the name in use, else the letter. */
export const spokenBy = (label: string | null, names: SpeakerNames | undefined): SpokenBy => ({ speaker: label ? (names?.get(label)?.name ?? label) : null, speakerLabel: label })
