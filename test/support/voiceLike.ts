// A deterministic voice-like signal (no synthesizer, so every machine makes the same samples):
// syllables of a harmonic source with vibrato and a falling pitch, each under a smooth envelope,
// two "voices" taking turns (different pitch, brightness and pace), a little seeded noise. The
// diarizer's reference test feeds it to the converted networks and compares their outputs with
// what the original PyTorch modules gave on the same samples (test/fixtures/diarizer-reference.json).
const SR = 16_000

export function voiceLike(seconds = 10): Float32Array {
  const out = new Float32Array(seconds * SR)
  let seed = 12345
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296) * 2 - 1
  const voices = [
    { f0: 120, harmonics: 18, tilt: 0.8, syllable: 0.22 },
    { f0: 210, harmonics: 12, tilt: 0.6, syllable: 0.17 },
  ]
  let t = 0.3
  let turn = 0
  while (t < seconds - 0.5) {
    const v = voices[turn % 2]!
    const turnEnd = Math.min(seconds - 0.3, t + 1.6 + (turn % 3) * 0.7)
    while (t < turnEnd) {
      const len = v.syllable * (0.8 + 0.4 * ((turn * 7 + Math.round(t * 10)) % 5) / 4)
      const a = Math.round(t * SR)
      const n = Math.round(len * SR)
      let phase = 0
      for (let i = 0; i < n && a + i < out.length; i++) {
        const u = i / n
        const f = v.f0 * (1.1 - 0.2 * u) * (1 + 0.02 * Math.sin(2 * Math.PI * 5.5 * (i / SR)))
        phase += (2 * Math.PI * f) / SR
        let x = 0
        for (let h = 1; h <= v.harmonics; h++) x += Math.sin(h * phase) * v.tilt ** h
        out[a + i]! += 0.25 * Math.sin(Math.PI * u) ** 2 * x
      }
      t += len + 0.04
    }
    t += 0.35
    turn++
  }
  for (let i = 0; i < out.length; i++) out[i]! += 0.002 * rand()
  return out
}
