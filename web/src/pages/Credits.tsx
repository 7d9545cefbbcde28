import { useEffect, useRef, useState } from 'preact/hooks'
import { api, type AuditVerdict, type CreditsView, type LedgerLine } from '../api.ts'
import { ErrorMessage, Link, Loading, PageTitle, useData } from '../components.tsx'
import { LINE_KINDS, bytes, number, signed, when } from '../format.ts'

export function CreditsPage() {
  const [cycle, setCycle] = useState<string | null>(null)
  const view = useData(() => api<CreditsView>('GET', `/credits${cycle ? `?cycle=${cycle}` : ''}`), [cycle])
  const audit = useData(() => api<AuditVerdict>('GET', '/credits/audit'), [])
  const v = view.data
  return (
    <>
      <PageTitle>Plan and credits</PageTitle>
      <ErrorMessage error={view.error} />
      {!v ? (
        <Loading />
      ) : (
        <>
          <section aria-labelledby="balance-title" class="cards">
            <h2 id="balance-title" class="visually-hidden">
              This cycle
            </h2>
            <dl class="card">
              <dt>Plan</dt>
              <dd class="big">{v.status.plan}</dd>
              <dt>Cycle</dt>
              <dd>
                {v.status.credits.cycle}, resets {when(v.status.credits.resetsAt)}
              </dd>
            </dl>
            <dl class="card">
              <dt>Credits left</dt>
              <dd class="big" id="credits-left">
                {number(v.status.credits.left)} <span class="small">of {number(v.status.credits.monthly)}</span>
              </dd>
              <dt>Held by reservations</dt>
              <dd>{number(v.status.credits.reserved)}</dd>
              <dt>Spent this cycle</dt>
              <dd>{number(v.status.credits.spent)}</dd>
            </dl>
            <dl class="card">
              <dt>Uploaded minutes</dt>
              <dd>
                {v.status.usage.uploadMinutes.used} of {v.status.usage.uploadMinutes.quota}
              </dd>
              <dt>Storage</dt>
              <dd>
                {bytes(v.status.usage.storage.usedBytes)} of {bytes(v.status.usage.storage.quotaBytes)}
              </dd>
              <dt>Notes</dt>
              <dd>
                {v.status.usage.notes.ready} ready, {v.status.usage.notes.processing} processing, {v.status.usage.notes.failed} failed
              </dd>
            </dl>
          </section>

          <section aria-labelledby="audit-title" class={`audit ${audit.data ? (audit.data.ok ? 'ok' : 'bad') : ''}`}>
            <h2 id="audit-title">Auditor’s verdict</h2>
            <ErrorMessage error={audit.error} />
            {!audit.data ? (
              <Loading />
            ) : (
              <div role="status" id="audit-verdict">
                {audit.data.ok ? (
                  <p>
                    <strong>OK</strong>: replaying the {audit.data.lines} ledger events gives a balance of {number(audit.data.balance)}, and the ledger below matches them
                    line by line.
                  </p>
                ) : (
                  <>
                    <p>
                      <strong>Mismatch</strong>: {audit.data.problems.length} problem(s).
                    </p>
                    <ul>
                      {audit.data.problems.map((x) => (
                        <li key={x}>{x}</li>
                      ))}
                    </ul>
                  </>
                )}
                <p class="small">
                  Checked {when(audit.data.auditedAt)}. The same check as <code>npm run audit-ledger</code>.
                </p>
              </div>
            )}
            <button type="button" onClick={() => void audit.reload()}>
              Run the audit again
            </button>
          </section>

          <section aria-labelledby="ledger-title">
            <h2 id="ledger-title">Ledger of {v.cycle}</h2>
            <div class="toolbar">
              <label for="cycle">Cycle</label>
              <select id="cycle" value={cycle ?? v.cycle} onChange={(e) => setCycle(e.currentTarget.value)}>
                {v.cycles.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
              <a class="button" href={`/app/api/credits/ledger.csv?cycle=${v.cycle}`} download={`credits-${v.cycle}.csv`}>
                Export CSV
              </a>
            </div>
            <BalanceChart lines={v.lines} cycle={v.cycle} monthly={v.status.credits.monthly} />
            <LedgerTable lines={v.lines} cycle={v.cycle} />
          </section>

          <section aria-labelledby="usage-title">
            <h2 id="usage-title">Usage by operation this cycle</h2>
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Operation</th>
                  <th scope="col" class="num">
                    Times
                  </th>
                  <th scope="col" class="num">
                    Credits
                  </th>
                </tr>
              </thead>
              <tbody>
                {v.status.usage.byOperation.length === 0 && (
                  <tr>
                    <td colSpan={3}>Nothing spent yet.</td>
                  </tr>
                )}
                {v.status.usage.byOperation.map((o) => (
                  <tr key={o.operation}>
                    <th scope="row">{o.operation}</th>
                    <td data-label="Times" class="num">
                      {o.count}
                    </td>
                    <td data-label="Credits" class="num">
                      {o.credits}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </>
      )}
    </>
  )
}

const LEDGER_PAGE = 25

/** The cycle's ledger, newest first, a page at a time (the chart above shows all of it). */
function LedgerTable(p: { lines: LedgerLine[]; cycle: string }) {
  const [page, setPage] = useState(0)
  useEffect(() => setPage(0), [p.cycle])
  const newest = [...p.lines].reverse()
  const pages = Math.max(1, Math.ceil(newest.length / LEDGER_PAGE))
  const shown = newest.slice(page * LEDGER_PAGE, (page + 1) * LEDGER_PAGE)
  const from = newest.length === 0 ? 0 : page * LEDGER_PAGE + 1
  return (
    <>
      <table class="data ledger" id="ledger">
        <caption>
          Every change of the balance, newest first: lines {from}–{page * LEDGER_PAGE + shown.length} of {newest.length}
        </caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Operation</th>
            <th scope="col">Note</th>
            <th scope="col" class="num">
              Change
            </th>
            <th scope="col" class="num">
              Balance
            </th>
          </tr>
        </thead>
        <tbody>
          {newest.length === 0 && (
            <tr>
              <td colSpan={6}>No line in this cycle.</td>
            </tr>
          )}
          {shown.map((l) => (
            <tr key={l.id} class={`kind-${LINE_KINDS[l.type]?.kind ?? 'other'}`}>
              <td data-label="When">{when(l.at)}</td>
              <td data-label="What">{LINE_KINDS[l.type]?.label ?? l.type}</td>
              <td data-label="Operation">{l.operation ?? '—'}</td>
              <td data-label="Note">{l.noteId ? <Link to={`notes/${l.noteId}`}>{l.noteTitle ?? 'a note'}</Link> : '—'}</td>
              <td data-label="Change" class="num">
                {signed(l.delta)}
              </td>
              <td data-label="Balance" class="num">
                {number(l.balanceAfter)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {pages > 1 && (
        <nav aria-label="Pages of the ledger" class="pager">
          <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
            Newer lines
          </button>
          <span class="small">
            Page {page + 1} of {pages}
          </span>
          <button type="button" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>
            Older lines
          </button>
        </nav>
      )}
    </>
  )
}

const KIND_ORDER = ['grant', 'charge', 'reservation', 'capture', 'release', 'refund', 'plan'] as const
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** Round steps for the time axis, with how a tick reads at that step (UTC, as the table). */
const TIME_STEPS: { ms: number; label: (t: Date) => string }[] = [
  ...[10, 30].map((sec) => ({ ms: sec * 1000, label: (t: Date) => t.toISOString().slice(11, 19) })),
  ...[1, 5, 15, 30].map((m) => ({ ms: m * MINUTE, label: (t: Date) => t.toISOString().slice(11, 16) })),
  ...[1, 3, 6, 12].map((h) => ({ ms: h * HOUR, label: (t: Date) => t.toISOString().slice(11, 16) })),
  ...[1, 2, 7].map((d) => ({ ms: d * DAY, label: (t: Date) => t.toLocaleString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' }) })),
]

/** The width the chart is drawn at: its container's, so the text stays at its size on a phone. */
function useWidth<T extends HTMLElement>(fallback: number) {
  const ref = useRef<T>(null)
  const [width, setWidth] = useState(fallback)
  useEffect(() => {
    const el = ref.current
    if (!el) return
    const measure = () => setWidth(Math.max(260, Math.floor(el.getBoundingClientRect().width)))
    measure()
    const ro = new ResizeObserver(measure)
    ro.observe(el)
    return () => ro.disconnect()
  }, [])
  return { ref, width }
}

/**
 * The balance as a step line, with a marker per ledger line (shape and colour by kind); the table
 * says the same in text. The time axis spans the lines themselves (first to last, within the
 * cycle), never less than a minute, so a cycle whose lines all fall on one day reads as well as a
 * month of them.
 */
function BalanceChart(p: { lines: LedgerLine[]; cycle: string; monthly: number }) {
  const [y, m] = p.cycle.split('-').map(Number) as [number, number]
  const cycleStart = Date.UTC(y, m - 1, 1)
  const cycleEnd = Date.UTC(y, m, 1)
  const { ref, width: W } = useWidth<HTMLElement>(720)
  const H = 240
  const pad = { l: 56, r: 16, t: 12, b: 28 }
  const times = p.lines.map((l) => Date.parse(l.at))
  const first = times.length ? Math.min(...times) : cycleStart
  const last = times.length ? Math.max(...times) : Math.min(Date.now(), cycleEnd)
  // A margin of a twentieth on each side, and at least a minute in all, within the cycle.
  const span = Math.min(cycleEnd - cycleStart, Math.max(MINUTE, (last - first) * 1.1))
  const start = Math.min(Math.max(cycleStart, (first + last) / 2 - span / 2), cycleEnd - span)
  const end = start + span
  // The axis spans the balances of the cycle (with a margin), so a charge of a few credits out of thousands still shows.
  const balances = p.lines.map((l) => l.balanceAfter)
  const top = Math.max(...balances, 1)
  const bottom = Math.min(...balances, top)
  const margin = Math.max((top - bottom) * 0.15, 10)
  // Round steps (1, 2 or 5 times a power of ten), so the axis reads 24,940 … 25,000, not 24,933 … 25,010.
  const raw = (top - bottom + 2 * margin) / 4
  const unit = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map((f) => f * unit).find((x) => x >= raw) ?? 10 * unit
  const min = Math.max(0, Math.floor((bottom - margin) / step) * step)
  const max = Math.ceil((top + margin) / step) * step
  const x = (t: number) => pad.l + ((Math.min(Math.max(t, start), end) - start) / (end - start)) * (W - pad.l - pad.r)
  const yy = (v: number) => pad.t + (1 - (v - min) / (max - min)) * (H - pad.t - pad.b)
  let d = ''
  let prev: number | null = null
  for (const l of p.lines) {
    const px = x(Date.parse(l.at))
    d += prev === null ? `M${px},${yy(l.balanceAfter)}` : `H${px}V${yy(l.balanceAfter)}`
    prev = l.balanceAfter
  }
  if (prev !== null) d += `H${x(Math.min(Date.now(), end))}`
  const ticks: number[] = []
  for (let v = min; v <= max + step / 2; v += step) ticks.push(v)
  // As many time ticks as fit (about one per 90 px), on round instants.
  const want = Math.max(2, Math.floor((W - pad.l - pad.r) / 90))
  const timeStep = TIME_STEPS.find((s) => (end - start) / s.ms <= want) ?? { ms: Math.ceil((end - start) / want / DAY) * DAY, label: TIME_STEPS.at(-1)!.label }
  const timeTicks: number[] = []
  for (let t = Math.ceil(start / timeStep.ms) * timeStep.ms; t <= end; t += timeStep.ms) timeTicks.push(t)
  const present = KIND_ORDER.filter((k) => p.lines.some((l) => LINE_KINDS[l.type]?.kind === k))
  const lastLine = p.lines.at(-1)
  return (
    <figure class="chart" ref={ref}>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-labelledby="chart-title chart-desc">
        <title id="chart-title">Balance over {p.cycle}</title>
        <desc id="chart-desc">
          {p.lines.length} ledger lines from {when(new Date(start).toISOString())} to {when(new Date(end).toISOString())}; the balance{' '}
          {lastLine ? `ends at ${lastLine.balanceAfter}` : 'has no line yet'} of {p.monthly} monthly credits.
        </desc>
        {ticks.map((t) => (
          <g key={t}>
            <line class="grid" x1={pad.l} x2={W - pad.r} y1={yy(t)} y2={yy(t)} />
            <text class="axis" x={pad.l - 6} y={yy(t) + 4} text-anchor="end">
              {number(t)}
            </text>
          </g>
        ))}
        {timeTicks.map((t) => (
          <text key={t} class="axis time-tick" x={x(t)} y={H - 8} text-anchor="middle">
            {timeStep.label(new Date(t))}
          </text>
        ))}
        <path class="balance" d={d} />
        {p.lines.map((l) => {
          const kind = LINE_KINDS[l.type]?.kind ?? 'plan'
          const cx = x(Date.parse(l.at))
          const cy = yy(l.balanceAfter)
          return (
            <g key={l.id} class={`mark kind-${kind}`}>
              <title>{`${LINE_KINDS[l.type]?.label ?? l.type}${l.operation ? ` (${l.operation})` : ''}: ${signed(l.delta)}, balance ${l.balanceAfter}, ${when(l.at)}`}</title>
              <Marker kind={kind} cx={cx} cy={cy} />
            </g>
          )
        })}
      </svg>
      <figcaption>
        <ul class="legend">
          {present.map((k) => (
            <li key={k}>
              <svg viewBox="0 0 12 12" width="12" height="12" aria-hidden="true" class={`kind-${k}`}>
                <Marker kind={k} cx={6} cy={6} />
              </svg>{' '}
              {k === 'grant' ? 'credits granted' : k === 'plan' ? 'plan change' : `${k}s`}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  )
}

function Marker(p: { kind: string; cx: number; cy: number }) {
  const { cx, cy } = p
  switch (p.kind) {
    case 'reservation':
    case 'release':
      return <rect x={cx - 4} y={cy - 4} width={8} height={8} />
    case 'refund':
      return <path d={`M${cx},${cy - 5}L${cx + 5},${cy + 4}L${cx - 5},${cy + 4}Z`} />
    case 'grant':
    case 'plan':
      return <path d={`M${cx},${cy - 5}L${cx + 5},${cy}L${cx},${cy + 5}L${cx - 5},${cy}Z`} />
    default:
      return <circle cx={cx} cy={cy} r={4} />
  }
}
