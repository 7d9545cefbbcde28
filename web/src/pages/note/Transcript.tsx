// The transcript: speakers (a suggested name is marked as one, with Accept; any speaker can be
// renamed inline), find and replace to correct it, and the lines: a click plays from there, the
// line being played is highlighted, `?t=` opens it at a line, and the menu beside a line gives it
// to another speaker (the diarizer heard the wrong voice) or to a new one.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, type ReplaceResult, type Speaker, type Transcript } from '../../api.ts'
import { Cost, ErrorMessage, Loading, Status, useData } from '../../components.tsx'
import { clock } from '../../format.ts'

const labelName = (label: string | null) => (label ? `Speaker ${label.replace(/^spk_/, '')}` : 'Unknown')

/** The name a line shows: a confirmed name as it is, any other (suggested, matched by voice) with a question mark. */
function shownSpeaker(s: Speaker | undefined, label: string | null): { text: string; suggested: boolean } {
  if (!s?.name) return { text: labelName(label), suggested: false }
  return s.nameStatus === 'confirmed' ? { text: s.name, suggested: false } : { text: `${s.name}?`, suggested: true }
}

export function TranscriptPanel(p: { noteId: string; canPlay: boolean; nowMs: number | null; focusMs: number | null; seek: (ms: number) => void }) {
  const transcript = useData(() => api<Transcript>('GET', `/notes/${p.noteId}/transcript`), [p.noteId])
  const list = useRef<HTMLOListElement>(null)
  const t = transcript.data
  // The line at a moment: of lines that overlap there (turns of two speakers), the one that began
  // last; in a pause, the line before it.
  const at = (ms: number | null) => {
    if (!t || ms === null) return null
    const started = t.segments.filter((s) => s.startMs <= ms)
    return [...started].reverse().find((s) => ms < s.endMs) ?? started.at(-1) ?? null
  }
  const playing = at(p.nowMs)?.sequence ?? null
  const focused = at(p.focusMs)

  // Opened at a time: that line scrolls into view and takes focus.
  useEffect(() => {
    if (!focused) return
    const el = list.current?.querySelector<HTMLButtonElement>(`[data-sequence="${focused.sequence}"]`)
    el?.scrollIntoView({ block: 'center' })
    el?.focus({ preventScroll: true })
  }, [focused?.sequence, !!t])

  if (!t) return transcript.error ? <ErrorMessage error={transcript.error} /> : <Loading />
  const speakers = new Map(t.speakers.map((s) => [s.label, s]))
  const index = (label: string | null) => {
    const i = t.speakers.findIndex((s) => s.label === label)
    return i < 0 ? 0 : (i % 6) + 1
  }
  return (
    <>
      <Speakers noteId={p.noteId} speakers={t.speakers} index={index} onChanged={() => void transcript.reload()} />
      <FindReplace noteId={p.noteId} onChanged={() => void transcript.reload()} />
      <h3 id="lines-title">Lines</h3>
      <p class="small" id="segments-help">
        {p.canPlay ? 'Choose a line to play the audio from there.' : 'Lines with their times.'}
      </p>
      <ol class="segments" ref={list} aria-labelledby="lines-title" aria-describedby="segments-help">
        {t.segments.map((s) => {
          const who = shownSpeaker(speakers.get(s.speakerLabel), s.speakerLabel)
          return (
            <li key={s.id} class={`${playing === s.sequence ? 'current' : ''}${focused?.sequence === s.sequence ? ' focused' : ''}`}>
              <button
                type="button"
                class="segment"
                data-start-ms={s.startMs}
                data-sequence={s.sequence}
                data-segment-id={s.id}
                disabled={!p.canPlay}
                aria-current={playing === s.sequence ? 'true' : undefined}
                onClick={() => p.seek(s.startMs)}
              >
                <span class="time">{clock(s.startMs)}</span>
                <span class={`who spk-${index(s.speakerLabel)}${who.suggested ? ' suggested' : ''}`} title={who.suggested ? 'suggested name, not confirmed' : undefined}>
                  {who.text}
                </span>
                <span class="text">{s.text}</span>
              </button>
              <LineSpeaker noteId={p.noteId} sequence={s.sequence} at={clock(s.startMs)} label={s.speakerLabel} speakers={t.speakers} onChanged={() => void transcript.reload()} />
            </li>
          )
        })}
      </ol>
      {t.truncation && (
        <p class="small" id="transcript-preview">
          A preview: {t.truncation.shownSegments} of {t.truncation.totalSegments} lines ({t.truncation.rule}). {t.truncation.getTheRest}
        </p>
      )}
    </>
  )
}

/** The menu's values for a new speaker and for a line nobody has (no label is empty or a dash). */
const NEW = ''
const NOBODY = '-'

/** Who said a line: the transcript's speakers and a new one; choosing another gives the line to it. */
function LineSpeaker(p: { noteId: string; sequence: number; at: string; label: string | null; speakers: Speaker[]; onChanged: () => void }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const labels = p.speakers.flatMap((s) => (s.label ? [s] : []))
  const change = async (to: string) => {
    if (to === p.label) return
    setBusy(true)
    setError(null)
    try {
      await api('PATCH', `/notes/${p.noteId}/segments/${p.sequence}/speaker`, to === NEW ? { newSpeaker: true } : { speakerLabel: to })
      p.onChanged()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <span class="line-speaker">
      <select aria-label={`Who said the line at ${p.at}`} value={p.label ?? NOBODY} disabled={busy} onChange={(e) => void change(e.currentTarget.value)}>
        {p.label === null && (
          <option value={NOBODY} disabled>
            Nobody
          </option>
        )}
        {labels.map((s) => (
          <option key={s.label} value={s.label!}>
            {shownSpeaker(s, s.label).text}
          </option>
        ))}
        <option value={NEW}>New speaker</option>
      </select>
      {error !== null && <ErrorMessage error={error} />}
    </span>
  )
}

function Speakers(p: { noteId: string; speakers: Speaker[]; index: (label: string | null) => number; onChanged: () => void }) {
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  // A merge moves every line of a speaker: it can be taken back in one step.
  const [undoable, setUndoable] = useState(false)
  /** A change to the speakers: sent, then said and the transcript read again; a refusal is shown. `canUndo`, when given: whether "Undo the merge" applies now. */
  const change = async (send: () => Promise<unknown>, done: string, canUndo?: boolean) => {
    setError(null)
    try {
      await send()
      setMessage(done)
      if (canUndo !== undefined) setUndoable(canUndo)
      p.onChanged()
    } catch (err) {
      setError(err)
    }
  }
  const rename = (label: string, name: string, done: string) => change(() => api('PATCH', `/notes/${p.noteId}/speakers/${encodeURIComponent(label)}`, { name }), done)
  const merge = (from: string, into: string, done: string) => change(() => api('POST', `/notes/${p.noteId}/speakers/${encodeURIComponent(from)}/merge`, { into }), done, true)
  const undo = () => change(() => api('POST', `/notes/${p.noteId}/speakers/undo`, {}), 'Merge undone: the lines are back with their speaker.', false)
  const named = p.speakers.filter((s): s is Speaker & { label: string } => s.label !== null)
  return (
    <section aria-labelledby="speakers-title">
      <h3 id="speakers-title">Speakers</h3>
      <ul class="speakers">
        {named.map((s) => (
          <SpeakerItem key={s.label} speaker={s} index={p.index(s.label)} rename={rename} others={named.filter((o) => o.label !== s.label)} merge={merge} />
        ))}
      </ul>
      <p class="actions">
        <button
          type="button"
          disabled={busy}
          onClick={async () => {
            setBusy(true)
            setError(null)
            try {
              await api('POST', `/notes/${p.noteId}/speakers/suggest`, {})
              setMessage('Names suggested from what is said and the source; nothing you named was changed.')
              p.onChanged()
            } catch (err) {
              setError(err)
            } finally {
              setBusy(false)
            }
          }}
        >
          Suggest names
        </button>{' '}
        <span class="small">
          <Cost credits={0} />, 10 per hour. Two labels that are one person: merge one into the other. A line said by someone else: choose who beside it.
        </span>
      </p>
      <ErrorMessage error={error} />
      <Status message={message} />
      {undoable && (
        <p>
          <button type="button" onClick={() => void undo()}>
            Undo the merge
          </button>
        </p>
      )}
    </section>
  )
}

function SpeakerItem(p: {
  speaker: Speaker & { label: string }
  index: number
  rename: (label: string, name: string, done: string) => Promise<void>
  others: (Speaker & { label: string })[]
  merge: (from: string, into: string, done: string) => Promise<void>
}) {
  const s = p.speaker
  const [editing, setEditing] = useState(false)
  const [name, setName] = useState(s.name ?? '')
  const input = useRef<HTMLInputElement>(null)
  // As the field appears (a layout effect: before the next key press, never a frame later).
  useLayoutEffect(() => {
    if (editing) input.current?.focus()
  }, [editing])
  const label = labelName(s.label)
  // A name not confirmed by the person (inferred, or matched by voice): offered for acceptance.
  const suggestion = s.nameStatus === 'confirmed' ? null : (s.name ?? s.suggestedName)
  const confidence = s.suggestedNameConfidence !== null ? ` ${Math.round(s.suggestedNameConfidence * 100)}%` : ''
  const status = s.nameStatus ?? (s.suggestedName ? 'suggested' : null)
  return (
    <li class="speaker" data-label={s.label} data-name-status={s.nameStatus ?? 'none'}>
      <span class={`dot spk-${p.index}`} aria-hidden="true" />{' '}
      {editing ? (
        <form
          class="inline-form"
          onSubmit={async (e) => {
            e.preventDefault()
            if (!name.trim()) return
            await p.rename(s.label, name.trim(), `${label} is now ${name.trim()}.`)
            setEditing(false)
          }}
        >
          <label for={`name-${s.label}`} class="visually-hidden">
            Name of {label}
          </label>
          <input id={`name-${s.label}`} ref={input} value={name} maxLength={120} required onInput={(e) => setName(e.currentTarget.value)} />
          <button type="submit">Save</button>
          <button type="button" class="quiet" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <>
          <span class="speaker-name">{s.nameStatus === 'confirmed' && s.name ? s.name : label}</span>
          {status === 'confirmed' && <span class="badge ok">confirmed</span>}
          {suggestion && (
            <span class="suggestion">
              {' '}
              <span class="badge suggested">{status?.replace(/_/g, '-')}</span> {suggestion}
              <span class="small">{confidence}</span>{' '}
              <button type="button" aria-label={`Accept ${suggestion} for ${label}`} onClick={() => void p.rename(s.label, suggestion, `${suggestion} confirmed for ${label}.`)}>
                Accept
              </button>
            </span>
          )}{' '}
          <button
            type="button"
            class="quiet"
            aria-label={`Rename ${s.nameStatus === 'confirmed' && s.name ? s.name : label}`}
            onClick={() => {
              setName(s.name ?? suggestion ?? '')
              setEditing(true)
            }}
          >
            Rename
          </button>
          {p.others.length > 0 && (
            <select
              class="merge"
              aria-label={`Merge ${shownSpeaker(s, s.label).text} into another speaker`}
              value=""
              onChange={(e) => {
                const into = p.others.find((o) => o.label === e.currentTarget.value)
                if (into) void p.merge(s.label, into.label, `${shownSpeaker(s, s.label).text} merged into ${shownSpeaker(into, into.label).text}: every line is theirs now.`)
              }}
            >
              <option value="">Merge into…</option>
              {p.others.map((o) => (
                <option key={o.label} value={o.label}>
                  {shownSpeaker(o, o.label).text}
                </option>
              ))}
            </select>
          )}
        </>
      )}
    </li>
  )
}

/** Correcting the transcript: literal find and replace over every line (POST transcript/replace). */
function FindReplace(p: { noteId: string; onChanged: () => void }) {
  const [find, setFind] = useState('')
  const [replace, setReplace] = useState('')
  const [caseSensitive, setCaseSensitive] = useState(false)
  const [wholeWord, setWholeWord] = useState(true)
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  return (
    <details class="find-replace">
      <summary>Correct the transcript (find and replace)</summary>
      <form
        onSubmit={async (e) => {
          e.preventDefault()
          setError(null)
          try {
            const r = await api<ReplaceResult>('POST', `/notes/${p.noteId}/transcript/replace`, { find, replace, caseSensitive, wholeWord })
            const stale = r.staleTranslations.map((x) => x.language).join(', ')
            setMessage(r.occurrences === 0 ? `“${find}” is not in the transcript.` : `${r.occurrences} replaced in ${r.changedSegments.length} line(s).${stale ? ` Translations to redo: ${stale}.` : ''}`)
            if (r.occurrences > 0) p.onChanged()
          } catch (err) {
            setError(err)
          }
        }}
      >
        <label for="find">Find</label>
        <input id="find" value={find} required maxLength={200} onInput={(e) => setFind(e.currentTarget.value)} />
        <label for="replace">Replace with</label>
        <input id="replace" value={replace} maxLength={500} onInput={(e) => setReplace(e.currentTarget.value)} />
        <label class="check">
          <input type="checkbox" checked={caseSensitive} onChange={(e) => setCaseSensitive(e.currentTarget.checked)} /> Match case
        </label>
        <label class="check">
          <input type="checkbox" checked={wholeWord} onChange={(e) => setWholeWord(e.currentTarget.checked)} /> Whole words only
        </label>
        <button type="submit">Replace everywhere</button> <Cost credits={0} />
      </form>
      <ErrorMessage error={error} />
      <Status message={message} />
    </details>
  )
}
