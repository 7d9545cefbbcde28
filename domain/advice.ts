// What an error code means to a person and what they can do next: one table for every edge.
// The dashboard reads it (GET /app/api/reference) for a failed note and for a refused request;
// MCP reads it for wait_for_transcription's `next` and for the `next` of a tool's refusal.
// A failed note's `errorCode` (NOTE_ERROR_CODES) and an answer's error code (part 7 of the spec)
// share a few names with different meanings (`insufficient_credits` while transcribing is not
// the 402 of a request), so the table has one section for each.
import type { ErrorCode } from './errors.ts'
import { NOTE_ERROR_CODES, faultOf, type FailureFault } from './notes/transcriptionJob.ts'

export interface Advice {
  /** What happened, in one sentence. */
  sentence: string
  /** What the person (or agent) can do about it. */
  next: string
}

/** After a failed transcription, by whose move it is (`faultOf`): only a source problem advises importing again. */
const NEXT_AFTER_FAILURE: Record<FailureFault, string> = {
  source: 'Check the link or file (the message says what was wrong with it), then import it again or try another source.',
  audio: 'The recording itself has nothing to transcribe; importing it again will not help. Its credits were given back.',
  account: 'Top up the credits (or pick a shorter recording), then import it again.',
  request: 'Import it again without a forced language, or with one the speech model supports.',
  server:
    'This is a problem on the server, not with the recording: importing again will not help until the service operator fixes it (the message says what to fix). Its credits were given back.',
}

const sentence = (meaning: string) => `${meaning[0]!.toUpperCase()}${meaning.slice(1)}.`

/** A failed note's `errorCode` (any code, also one this table does not know yet). */
export function noteFailureAdvice(errorCode: string | null): Advice {
  const known = errorCode !== null && errorCode in NOTE_ERROR_CODES ? NOTE_ERROR_CODES[errorCode as keyof typeof NOTE_ERROR_CODES] : null
  return { sentence: known ? sentence(known.meaning) : 'The transcription failed on the server.', next: NEXT_AFTER_FAILURE[faultOf(errorCode)] }
}

/** A refused request, by its error code: the limits first (what a person meets most), then the rest a person can act on. */
export const REFUSAL_ADVICE: Partial<Record<ErrorCode, Advice>> = {
  insufficient_credits: {
    sentence: 'The credits left this month do not cover this.',
    next: 'Wait for the next cycle (the credits page says when it starts) or move to a plan with more credits; every paid action shows its price first.',
  },
  upgrade_required: {
    sentence: 'The credits left this month do not cover these templates.',
    next: 'Pick fewer templates, wait for the next cycle, or move to a plan with more credits.',
  },
  quota_exceeded: { sentence: 'This month’s upload minutes are used up.', next: 'Wait for the next cycle or move to a plan with more minutes.' },
  tier_upgrade_required: { sentence: 'Your plan does not include this.', next: 'Move to the plan named in the message.' },
  rate_limit_exceeded: { sentence: 'Too many of these in a short time.', next: 'Wait the seconds the message names, then try again.' },
  file_too_large: { sentence: 'The file is larger than your plan allows, or your storage is full.', next: 'Upload a smaller file (or a shorter cut), or delete notes you no longer need.' },
  duration_limit_exceeded: { sentence: 'The recording is longer than your plan allows.', next: 'Upload a shorter cut, or move to a plan with longer recordings.' },
  unsupported_media_type: { sentence: 'That file is not audio or video.', next: 'Pick an audio or video file (mp3, m4a, wav, ogg, webm, mp4…).' },
  invalid_audio_url: { sentence: 'That link cannot be imported.', next: 'Use a public http(s) link to an audio or video file, a video page or a podcast.' },
  upload_url_expired: { sentence: 'The upload link expired before the file arrived.', next: 'Add the recording again.' },
  invalid_upload_signature: { sentence: 'The upload link was refused.', next: 'Add the recording again.' },
  note_not_ready: { sentence: 'The note is not ready yet.', next: 'Wait until its transcript is ready; the page updates by itself.' },
  no_transcript: { sentence: 'That transcript does not exist (yet).', next: 'Wait until the note is ready; a translation must be requested before it can be read.' },
  same_language: { sentence: 'The transcript is already in that language.', next: 'Pick another language.' },
  audio_unavailable: { sentence: 'The audio of this note is no longer stored.', next: 'The transcript and everything made from it stay; only what needs the audio is gone.' },
  chat_failed: { sentence: 'The language model did not answer. Nothing was charged (a charge is refunded).', next: 'Try again in a moment.' },
  llm_invalid_json: { sentence: 'No template came out. The credits were refunded.', next: 'Try again, or another template.' },
  speaker_naming_failed: { sentence: 'Names could not be inferred; nothing changed.', next: 'Try again later, or name the speakers yourself.' },
  invalid_state: { sentence: 'It is not in a state for that any more.', next: 'Reload to see where it is now.' },
  not_found: { sentence: 'It does not exist, or it belongs to another account.', next: 'Go back to your notes.' },
  not_signed_in: { sentence: 'You are signed out.', next: 'Sign in again.' },
  service_unavailable: { sentence: 'The service is busy.', next: 'Try again in a few seconds.' },
  internal_error: { sentence: 'Something went wrong on our side.', next: 'Try again; if it keeps failing, tell the service operator.' },
}

/** The whole table, as the dashboard gets it. */
export const ADVICE = {
  noteFailures: Object.fromEntries(Object.keys(NOTE_ERROR_CODES).map((code) => [code, noteFailureAdvice(code)])) as Record<string, Advice>,
  unknownFailure: noteFailureAdvice(null),
  refusals: REFUSAL_ADVICE as Record<string, Advice>,
}
