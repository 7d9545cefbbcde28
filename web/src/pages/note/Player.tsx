// The note's player: the audio element without the browser's own controls, and controls of ours
// (play, back 10 s, a position slider, speed), so the length it shows is the note's length and
// positions follow the page's one rounding rule (format.ts `clock`). Keyboard: every control is a
// button, a slider or a select.
import { useEffect, useState } from 'preact/hooks'
import type { Ref } from 'preact'
import { clock } from '../../format.ts'

export function Player(p: { audioRef: Ref<HTMLAudioElement>; src: string; lengthMs: number | null; onTime: (ms: number) => void }) {
  const [audio, setAudio] = useState<HTMLAudioElement | null>(null)
  const [now, setNow] = useState(0)
  const [playing, setPlaying] = useState(false)
  const [ended, setEnded] = useState(false)
  const [mediaMs, setMediaMs] = useState<number | null>(null)
  const lengthMs = p.lengthMs ?? mediaMs

  useEffect(() => {
    if (!audio) return
    const time = () => {
      // Whole milliseconds: a seek to 8.165 s reads back as 8.164999…, before the line it sought.
      const ms = Math.round(audio.currentTime * 1000)
      setNow(ms)
      setEnded(audio.ended)
      p.onTime(ms)
    }
    const play = () => setPlaying(!audio.paused)
    const meta = () => setMediaMs(Number.isFinite(audio.duration) ? Math.round(audio.duration * 1000) : null)
    const events: [string, () => void][] = [
      ['timeupdate', time],
      ['seeked', time],
      ['play', play],
      ['pause', play],
      ['ended', play],
      ['loadedmetadata', meta],
    ]
    for (const [e, f] of events) audio.addEventListener(e, f)
    return () => {
      for (const [e, f] of events) audio.removeEventListener(e, f)
    }
  }, [audio])

  const setRef = (el: HTMLAudioElement | null) => {
    setAudio(el)
    if (typeof p.audioRef === 'function') p.audioRef(el)
    else if (p.audioRef) p.audioRef.current = el
  }
  // At the end the position is the note's length (the media may be a few ms longer or shorter).
  const shown = ended && lengthMs !== null ? lengthMs : Math.min(now, lengthMs ?? now)
  return (
    <div class="player" role="group" aria-label="Audio player">
      <audio ref={setRef} id="player" preload="metadata" src={p.src} />
      <button type="button" class="play" aria-label={playing ? 'Pause' : 'Play'} onClick={() => (audio?.paused ? audio.play().catch(() => {}) : audio?.pause())}>
        {playing ? '❚❚' : '▶'}
      </button>
      <button type="button" class="quiet" aria-label="Back 10 seconds" onClick={() => audio && (audio.currentTime = Math.max(0, audio.currentTime - 10))}>
        −10 s
      </button>
      <input
        type="range"
        class="position"
        aria-label="Position"
        min={0}
        max={lengthMs ?? 0}
        step={100}
        value={shown}
        aria-valuetext={`${clock(shown)} of ${lengthMs !== null ? clock(lengthMs) : 'unknown length'}`}
        onInput={(e) => audio && (audio.currentTime = Number(e.currentTarget.value) / 1000)}
      />
      <span class="time" id="player-time">
        {clock(shown)} / {lengthMs !== null ? clock(lengthMs) : '–:––'}
      </span>
      <label for="speed" class="visually-hidden">
        Speed
      </label>
      <select id="speed" onChange={(e) => audio && (audio.playbackRate = Number(e.currentTarget.value))}>
        {[0.75, 1, 1.25, 1.5, 2].map((r) => (
          <option key={r} value={r} selected={r === 1}>
            {r}×
          </option>
        ))}
      </select>
    </div>
  )
}
