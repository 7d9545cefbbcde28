import { useState } from 'preact/hooks'
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
            <LedgerTable lines={v.lines} />
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
                    <td class="num">{o.count}</td>
                    <td class="num">{o.credits}</td>
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

function LedgerTable(p: { lines: LedgerLine[] }) {
  return (
    <table class="data ledger" id="ledger">
      <caption>Every change of the balance, oldest first</caption>
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
        {p.lines.length === 0 && (
          <tr>
            <td colSpan={6}>No line in this cycle.</td>
          </tr>
        )}
        {p.lines.map((l) => (
          <tr key={l.id} class={`kind-${LINE_KINDS[l.type]?.kind ?? 'other'}`}>
            <td>{when(l.at)}</td>
            <td>{LINE_KINDS[l.type]?.label ?? l.type}</td>
            <td>{l.operation ?? '—'}</td>
            <td>{l.noteId ? <Link to={`notes/${l.noteId}`}>{l.noteTitle ?? 'a note'}</Link> : '—'}</td>
            <td class="num">{signed(l.delta)}</td>
            <td class="num">{number(l.balanceAfter)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

const KIND_ORDER = ['grant', 'charge', 'reservation', 'capture', 'release', 'refund', 'plan'] as const

/** The balance over the cycle as a step line, with a marker per line (shape and colour by kind). The table above says the same in text. */
function BalanceChart(p: { lines: LedgerLine[]; cycle: string; monthly: number }) {
  const [y, m] = p.cycle.split('-').map(Number) as [number, number]
  const start = Date.UTC(y, m - 1, 1)
  const end = Date.UTC(y, m, 1)
  const W = 720
  const H = 240
  const pad = { l: 56, r: 16, t: 12, b: 28 }
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
  const days = [1, 8, 15, 22, 29].filter((dd) => Date.UTC(y, m - 1, dd) < end)
  const present = KIND_ORDER.filter((k) => p.lines.some((l) => LINE_KINDS[l.type]?.kind === k))
  const last = p.lines.at(-1)
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-title chart-desc" preserveAspectRatio="xMidYMid meet">
        <title id="chart-title">Balance over {p.cycle}</title>
        <desc id="chart-desc">
          {p.lines.length} ledger lines; the balance {last ? `ends at ${last.balanceAfter}` : 'has no line yet'} of {p.monthly} monthly credits.
        </desc>
        {ticks.map((t) => (
          <g key={t}>
            <line class="grid" x1={pad.l} x2={W - pad.r} y1={yy(t)} y2={yy(t)} />
            <text class="axis" x={pad.l - 6} y={yy(t) + 4} text-anchor="end">
              {number(t)}
            </text>
          </g>
        ))}
        {days.map((dd) => (
          <text key={dd} class="axis" x={x(Date.UTC(y, m - 1, dd))} y={H - 8} text-anchor="middle">
            {dd} {new Date(Date.UTC(y, m - 1, dd)).toLocaleString('en-GB', { month: 'short', timeZone: 'UTC' })}
          </text>
        ))}
        <path class="balance" d={d} />
        {p.lines.map((l) => {
          const kind = LINE_KINDS[l.type]?.kind ?? 'plan'
          const cx = x(Date.parse(l.at))
          const cy = yy(l.balanceAfter)
          return (
            <g key={l.id} class={`mark kind-${kind}`}>
              <title>{`${LINE_KINDS[l.type]?.label ?? l.type}${l.operation ? ` (${l.operation})` : ''}: ${signed(l.delta)}, balance ${l.balanceAfter}`}</title>
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
