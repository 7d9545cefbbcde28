// A note: its status until it is ready (polled with backoff), the player, and one tab per thing
// made from it: transcript and speakers, analyses, outline, translation, questions, deliverables,
// exports, and its details (title, description, tags, folder, delete). A time anywhere on the page
// (an analysis anchor, a chapter, a citation) is a link to `?tab=transcript&t=<ms>`: it opens the
// transcript at that line and moves the player there.
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, api, type AccountStatus, type NoteDetail } from '../api.ts'
import { ErrorMessage, Link, Loading, NotFound, PageTitle, Tabs, backoff, useData } from '../components.tsx'
import { navigate, useLocation } from '../router.ts'
import { duration, number, when } from '../format.ts'
import { ProgressView } from '../progress.tsx'
import { Player } from './note/Player.tsx'
import { TranscriptPanel } from './note/Transcript.tsx'
import { AnalysesPanel } from './note/Analyses.tsx'
import { OutlinePanel } from './note/Outline.tsx'
import { TranslationPanel } from './note/Translation.tsx'
import { AskPanel } from './note/Ask.tsx'
import { DeliverablesPanel } from './note/Deliverables.tsx'
import { ExportPanel } from './note/Export.tsx'
import { DetailsPanel } from './note/Details.tsx'
import type { Credits } from './note/shared.ts'

const TABS = [
  { key: 'transcript', label: 'Transcript' },
  { key: 'analyses', label: 'Analyses' },
  { key: 'outline', label: 'Outline' },
  { key: 'translation', label: 'Translation' },
  { key: 'ask', label: 'Ask' },
  { key: 'deliverables', label: 'Deliverables' },
  { key: 'export', label: 'Export' },
  { key: 'details', label: 'Details' },
] as const
export type TabKey = (typeof TABS)[number]['key']

export function NotePage(p: { noteId: string }) {
  const { query } = useLocation()
  const note = useData(
    () => api<NoteDetail>('GET', `/notes/${p.noteId}`),
    [p.noteId],
    (n, unchanged) => (n.status === 'processing' ? backoff(unchanged) : null),
  )
  const account = useData(() => api<AccountStatus>('GET', '/account/status'), [])
  const credits: Credits = { left: account.data?.credits.left ?? null, refresh: () => void account.reload() }
  const player = useRef<HTMLAudioElement>(null)
  const [nowMs, setNowMs] = useState<number | null>(null)
  const n = note.data
  const tab: TabKey = TABS.some((t) => t.key === query.get('tab')) ? (query.get('tab') as TabKey) : n && n.status !== 'ready' ? 'details' : 'transcript'
  const t = query.get('t')
  const focusMs = t !== null && /^\d+$/.test(t) ? Number(t) : null

  // A time link moves the player there (it plays once the person presses play).
  useEffect(() => {
    if (focusMs === null || !player.current) return
    player.current.currentTime = focusMs / 1000
    setNowMs(focusMs)
  }, [focusMs, n?.audio?.url])

  const choose = (key: TabKey) => navigate(`/app/notes/${p.noteId}?tab=${key}`, { replace: true })
  const seek = (ms: number) => {
    const audio = player.current
    setNowMs(ms)
    if (!audio) return
    audio.currentTime = ms / 1000
    // Playing may be refused (no audio device, autoplay rules); the position is set either way.
    audio.play().catch(() => {})
  }

  if (note.error instanceof ApiError && note.error.status === 404) return <NotFound what="note" />
  return (
    <>
      <p class="crumbs">
        <Link to="notes">← All notes</Link>
      </p>
      {!n ? (
        note.error ? (
          <>
            <PageTitle>Note</PageTitle>
            <ErrorMessage error={note.error} />
            <button type="button" onClick={() => void note.reload()}>
              Try again
            </button>
          </>
        ) : (
          <Loading />
        )
      ) : (
        <>
          <PageTitle>{n.title || 'Untitled'}</PageTitle>
          <ErrorMessage error={note.error} />
          <dl class="facts">
            <dt>Status</dt>
            <dd id="note-status">
              <ProgressView progress={n.progress} status={n.status} errorCode={n.errorCode} errorMessage={n.errorMessage} id={n.id} />
            </dd>
            <dt>Length</dt>
            <dd id="note-length">{duration(n.durationSeconds)}</dd>
            <dt>Language</dt>
            <dd>{n.language ?? '—'}</dd>
            <dt>Created</dt>
            <dd>{when(n.createdAt)}</dd>
            {n.tags.length > 0 && (
              <>
                <dt>Tags</dt>
                <dd>{n.tags.join(', ')}</dd>
              </>
            )}
            {n.description && (
              <>
                <dt>Description</dt>
                <dd class="description">{n.description}</dd>
              </>
            )}
            <dt>Credits left</dt>
            <dd id="credits-left">{credits.left === null ? '—' : number(credits.left)}</dd>
          </dl>
          <section aria-labelledby="audio-title" class="audio">
            <h2 id="audio-title" class="visually-hidden">
              Audio
            </h2>
            {n.audio ? (
              <Player audioRef={player} src={n.audio.url} lengthMs={n.durationSeconds !== null ? n.durationSeconds * 1000 : null} onTime={setNowMs} />
            ) : (
              <p class="small" id="no-audio">
                {noAudioReason(n)}
              </p>
            )}
          </section>
          <Tabs label="Parts of the note" tabs={n.status === 'ready' ? TABS : TABS.filter((x) => x.key === 'details')} current={n.status === 'ready' ? tab : 'details'} onChoose={choose} />
          <div role="tabpanel" id={`panel-${n.status === 'ready' ? tab : 'details'}`} aria-labelledby={`tab-${n.status === 'ready' ? tab : 'details'}`} class="panel">
            {n.status !== 'ready' || tab === 'details' ? (
              <DetailsPanel note={n} onSaved={(d) => note.setData({ ...n, ...d })} />
            ) : tab === 'transcript' ? (
              <TranscriptPanel noteId={n.id} canPlay={!!n.audio} nowMs={nowMs} focusMs={focusMs} seek={seek} />
            ) : tab === 'analyses' ? (
              <AnalysesPanel noteId={n.id} credits={credits} />
            ) : tab === 'outline' ? (
              <OutlinePanel noteId={n.id} credits={credits} />
            ) : tab === 'translation' ? (
              <TranslationPanel noteId={n.id} sourceLanguage={n.language} />
            ) : tab === 'ask' ? (
              <AskPanel noteId={n.id} credits={credits} seek={seek} />
            ) : tab === 'deliverables' ? (
              <DeliverablesPanel noteId={n.id} credits={credits} />
            ) : (
              <ExportPanel note={n} credits={credits} />
            )}
          </div>
        </>
      )}
    </>
  )
}

/** Why a note has no player, by what the note says (never the same sentence whatever happened). */
function noAudioReason(n: NoteDetail): string {
  if (n.audioDeletedAt) return `The audio was deleted by the retention window on ${when(n.audioDeletedAt)}; the transcript and everything made from it stay.`
  if (n.status === 'processing') return 'The audio plays here once it is stored.'
  if (n.status === 'failed') return 'No audio is stored for this note: it failed before any was kept.'
  if (n.sourceType === 'url') return 'No audio is stored for this note: the source published its transcript, so the audio was never downloaded.'
  return 'No audio is stored for this note.'
}
