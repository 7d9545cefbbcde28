// Speaker labels as the diarizer gives them: A, B, ... Z, AA, AB ...

/**
 * The label a new speaker gets: the first letter not `taken` (a published transcript's `spk_0`
 * labels are no letters, so its next speaker is still A).
 */
export function nextSpeakerLabel(taken: ReadonlySet<string | null>): string {
  const letters = (n: number): string => (n < 26 ? String.fromCharCode(65 + n) : letters(Math.floor(n / 26) - 1) + String.fromCharCode(65 + (n % 26)))
  for (let n = 0; ; n++) if (!taken.has(letters(n))) return letters(n)
}
