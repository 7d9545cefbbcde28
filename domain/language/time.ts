// How answers and documents quote a position in the audio.

/** `mm:ss` of a millisecond position; minutes keep counting past the hour (75:02). */
export function mmss(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000))
  const m = Math.floor(total / 60)
  const s = total % 60
  return `${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`
}
