// The texts of the biometric consent, by version. A person grants the version whose text the
// dashboard showed them; a grant of any version other than CURRENT_CONSENT_VERSION reads as
// `outdated` and must be accepted again. A new text is a new entry here and a new
// CURRENT_CONSENT_VERSION in ./voiceProfiles.ts; older entries stay so the dashboard can say
// what was agreed to.
import { CURRENT_CONSENT_VERSION } from './voiceProfiles.ts'

export interface ConsentText {
  version: string
  title: string
  /** Paragraphs, plain text. */
  paragraphs: string[]
}

export const CONSENT_TEXTS: Readonly<Record<string, ConsentText>> = {
  '2025-03': {
    version: '2025-03',
    title: 'Voice recognition',
    paragraphs: [
      'With your consent, the service compares the voices in your notes with voices you confirmed before, to suggest who is speaking.',
      'You can revoke this consent at any time; the stored voiceprints are then deleted.',
    ],
  },
  '2026-01': {
    version: '2026-01',
    title: 'Consent to the processing of voice characteristics (biometric data)',
    paragraphs: [
      'When you confirm the name of a speaker in one of your notes, the service can compute a voiceprint: a list of numbers that describes the characteristics of that person’s voice. Voiceprints are biometric data.',
      'With your consent, the service keeps one voiceprint per person you confirm, compares the speakers of your new notes with them, and suggests who is speaking. It never recognises anyone you did not confirm yourself, and a person you mark "do not recognise this person" is never analysed again: their voiceprint is deleted and only their name is kept.',
      'Voiceprints are stored apart from your notes, are never shown through the API or to AI clients, are never used to train models and are never shared.',
      'Make sure that the people whose voices you confirm agree to being recognised. You can revoke this consent at any time on this page: every voiceprint is then deleted at once, and nothing is analysed until you consent again.',
      'Consent can be given only here, by a person signed in to the dashboard; an API key or an AI client can never give it.',
    ],
  },
}

export const currentConsentText = (): ConsentText => CONSENT_TEXTS[CURRENT_CONSENT_VERSION]!
