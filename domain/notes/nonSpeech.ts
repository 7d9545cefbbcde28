// What speech engines write where nobody speaks: Whisper's `[BLANK_AUDIO]`, `[Music]`,
// `(upbeat music)`, `♪`, `[ Silence ]`, ... These are not words anyone said; they are removed
// from transcripts (a segment left empty is dropped), and audio that yields nothing else has no
// speech. Square brackets always hold such a tag in engine output; round brackets only when
// they name a sound, so a spoken "(see above)" from a caption file stays.

const SOUNDS =
  'music|musica|musique|musik|applause|applauding|laughter|laughing|laughs|laugh|silence|noise|static|inaudible|blank[ _]audio|no audio|sighs?|coughs?|coughing|breathing|background noise|crosstalk|indistinct|unintelligible|beep|bell|wind|clapping|cheering|typing|footsteps|speaking in foreign language|foreign language|sound|sounds'
const ROUND = new RegExp(`\\(\\s*(?:[a-z]+\\s+)*(?:${SOUNDS})(?:\\s+[a-z]+)*\\s*\\)`, 'giu')
const SQUARE = /\[[^\]\n]{0,60}\]/gu
const STARRED = new RegExp(`\\*\\s*(?:${SOUNDS})\\s*\\*`, 'giu')
const NOTES = /[♪♫♬]+/gu

/** The text without non-speech tags, whitespace tidied; '' when nothing spoken is left. */
export function stripNonSpeech(text: string): string {
  return text
    .replace(SQUARE, ' ')
    .replace(ROUND, ' ')
    .replace(STARRED, ' ')
    .replace(NOTES, ' ')
    .replace(/\s+/g, ' ')
    .replace(/\s+([,.!?;:])/g, '$1')
    .trim()
    .replace(/^[\s,.;:!?-]+$/u, '')
}

/** Segments (and their words) without non-speech tags; segments left without words are dropped. */
export function withoutNonSpeech<S extends { text: string; words: { text: string }[] | null }>(segments: readonly S[]): S[] {
  const out: S[] = []
  for (const s of segments) {
    const text = stripNonSpeech(s.text)
    if (text === '') continue
    const words = s.words ? s.words.filter((w) => stripNonSpeech(w.text) !== '') : null
    out.push({ ...s, text, words })
  }
  return out
}
