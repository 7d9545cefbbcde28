import { useEffect, useRef, useState } from 'preact/hooks'
import { api, type NoteDetail, type Segment, type Transcript } from '../api.ts'
import { ConfirmButton, ErrorMessage, Link, Loading, PageTitle, useData } from '../components.tsx'
import { navigate } from '../router.ts'
import { clock, duration, when } from '../format.ts'
import { ProgressView } from './Notes.tsx'

const speakerOf = (s: Segment, t: Transcript) => s.speakerName ?? t.speakers.find((x) => x.label === s.speakerLabel)?.name ?? (s.speakerLabel ? `Speaker ${s.speakerLabel.replace(/^spk_/, '')}` : 'Unknown')

export function NotePage(p: { noteId: string }) {
  const note = useData(() => api<NoteDetail>('GET', `/notes/${p.noteId}`), [p.noteId], (n) => (n.status === 'processing' ? 1000 : null))
  const ready = note.data?.status === 'ready'
  const transcript = useData(() => (ready ? api<Transcript>('GET', `/notes/${p.noteId}/transcript`) : Promise.resolve(null)), [p.noteId, ready])
  const player = useRef<HTMLAudioElement>(null)
  const [playing, setPlaying] = useState<number | null>(null)

  useEffect(() => {
    const audio = player.current
    const t = transcript.data
    if (!audio || !t) return
    const onTime = () => {
      const ms = audio.currentTime * 1000
      setPlaying(t.segments.find((s) => ms >= s.startMs && ms < s.endMs)?.sequence ?? null)
    }
    audio.addEventListener('timeupdate', onTime)
    audio.addEventListener('seeked', onTime)
    return () => {
      audio.removeEventListener('timeupdate', onTime)
      audio.removeEventListener('seeked', onTime)
    }
  }, [transcript.data, note.data?.audio?.url])

  const seek = (s: Segment) => {
    const audio = player.current
    if (!audio) return
    audio.currentTime = s.startMs / 1000
    setPlaying(s.sequence)
    // Playing may be refused (no audio device, autoplay rules); the position is set either way.
    audio.play().catch(() => {})
  }

  const [deleteError, setDeleteError] = useState<unknown>(null)
  const n = note.data
  return (
    <>
      <p class="crumbs">
        <Link to="notes">← All notes</Link>
      </p>
      <ErrorMessage error={note.error} />
      {!n ? (
        <Loading />
      ) : (
        <>
          <PageTitle>{n.title || 'Untitled'}</PageTitle>
          <dl class="facts">
            <dt>Status</dt>
            <dd id="note-status">
              <ProgressView progress={n.progress} status={n.status} errorCode={n.errorCode} errorMessage={n.errorMessage} id={n.id} />
            </dd>
            <dt>Length</dt>
            <dd>{duration(n.durationSeconds)}</dd>
            <dt>Language</dt>
            <dd>{n.language ?? '—'}</dd>
            <dt>Created</dt>
            <dd>{when(n.createdAt)}</dd>
          </dl>
          <p>
            <ConfirmButton
              label="Delete note"
              confirmLabel={`Delete “${n.title || 'Untitled'}” and its transcript for good`}
              onConfirm={async () => {
                try {
                  await api('DELETE', `/notes/${n.id}`)
                  navigate('notes')
                } catch (err) {
                  setDeleteError(err)
                }
              }}
            />
          </p>
          <ErrorMessage error={deleteError} />
          <section aria-labelledby="audio-title">
            <h2 id="audio-title">Audio</h2>
            {n.audio ? (
              <audio ref={player} id="player" controls preload="metadata" src={n.audio.url} aria-labelledby="audio-title">
                Your browser cannot play this audio.
              </audio>
            ) : (
              <p>No audio is stored for this note: its retention window ended, or the source published its transcript so the audio was never downloaded.</p>
            )}
          </section>
          <section aria-labelledby="transcript-title">
            <h2 id="transcript-title">Transcript</h2>
            <ErrorMessage error={transcript.error} />
            {n.status !== 'ready' ? (
              <p>The transcript appears here when the note is ready.</p>
            ) : !transcript.data ? (
              <Loading />
            ) : (
              <>
                <h3 id="speakers-title">Speakers</h3>
                <ul class="speakers" aria-labelledby="speakers-title">
                  {transcript.data.speakers.map((s) => (
                    <li key={s.label}>
                      <span class={`dot spk-${speakerIndex(transcript.data!, s.label)}`} aria-hidden="true" /> {s.name ?? `Speaker ${s.label.replace(/^spk_/, '')}`}
                      {/* An inferred name in use is not one the person confirmed: say so. */}
                      {s.nameStatus === 'suggested' && <span class="small"> (suggested)</span>}
                    </li>
                  ))}
                </ul>
                <p class="small" id="segments-help">
                  {n.audio ? 'Choose a segment to play the audio from there.' : 'Segments with their times.'}
                </p>
                <ol class="segments" aria-describedby="segments-help">
                  {transcript.data.segments.map((s) => (
                    <li key={s.id} class={playing === s.sequence ? 'current' : ''}>
                      <button
                        type="button"
                        class="segment"
                        data-start-ms={s.startMs}
                        disabled={!n.audio}
                        aria-current={playing === s.sequence ? 'true' : undefined}
                        onClick={() => seek(s)}
                      >
                        <span class="time">{clock(s.startMs)}</span>
                        <span class={`who spk-${speakerIndex(transcript.data!, s.speakerLabel)}`}>{speakerOf(s, transcript.data!)}</span>
                        <span class="text">{s.text}</span>
                      </button>
                    </li>
                  ))}
                </ol>
                {transcript.data.truncation && (
                  <p class="small" id="transcript-preview">
                    A preview: {transcript.data.truncation.shownSegments} of {transcript.data.truncation.totalSegments} segments ({transcript.data.truncation.rule}).{' '}
                    {transcript.data.truncation.getTheRest}
                  </p>
                )}
              </>
            )}
          </section>
        </>
      )}
    </>
  )
}

function speakerIndex(t: Transcript, label: string | null): number {
  const i = t.speakers.findIndex((s) => s.label === label)
  return i < 0 ? 0 : (i % 6) + 1
}
