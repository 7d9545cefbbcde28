// Small helpers shared by the benchmark scripts (run on demand with `npx tsx bench/<name>.ts`).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'

/** A fresh directory under os.tmpdir(); `cleanup` removes it (also on exit and Ctrl-C). */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `bench-${prefix}-`))
  let removed = false
  const cleanup = () => {
    if (removed) return
    removed = true
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', cleanup)
  process.once('SIGINT', () => {
    cleanup()
    process.exit(130)
  })
  return { dir, cleanup }
}

export const now = (): number => performance.now()

/** Nearest-rank percentile of an unsorted sample (sorted copy). */
export function percentile(sample: ArrayLike<number>, p: number): number {
  if (sample.length === 0) return NaN
  const sorted = Float64Array.from(sample).sort()
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

export interface Stats {
  count: number
  seconds: number
  rate: number
  p50: number
  p95: number
  p99: number
  max: number
}

export function stats(latenciesMs: ArrayLike<number>, seconds: number): Stats {
  const sorted = Float64Array.from(latenciesMs).sort()
  const at = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!)
  return {
    count: sorted.length,
    seconds,
    rate: sorted.length / seconds,
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
  }
}

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US')
export const fmtMs = (n: number) => (n < 1 ? n.toFixed(3) : n < 10 ? n.toFixed(2) : n.toFixed(1))
export const fmtRatio = (n: number) => `${n.toFixed(2)}x`

export function machine(): string {
  const c = cpus()
  return `${c.length} cores (${c[0]?.model ?? 'unknown'}), Node ${process.version}, ${process.platform}/${process.arch}`
}

/** Share of the last 10 s in which some task waited for `cpu` or `io` (Linux PSI), or '?'. */
export function pressure(kind: 'cpu' | 'io'): string {
  try {
    return /some avg10=([\d.]+)/.exec(readFileSync(`/proc/pressure/${kind}`, 'utf8'))?.[1] ?? '?'
  } catch {
    return '?'
  }
}

/**
 * How busy the machine is besides us. Printed at the start and end of each script, since other
 * work on a shared machine moves these figures more than code does.
 */
export function machineLoad(): string {
  return `load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, waiting for cpu ${pressure('cpu')} %, for io ${pressure('io')} % (PSI, last 10 s)`
}

/** Prints an aligned text table. */
export function table(headers: string[], rows: (string | number)[][]): void {
  const cells = [headers, ...rows.map((r) => r.map(String))]
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)))
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
  console.log(line(headers))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  for (const r of cells.slice(1)) console.log(line(r))
}

/** Reads an integer from the environment (for quick/long runs). */
export const envInt = (name: string, fallback: number): number => {
  const v = process.env[name]
  const n = v === undefined ? NaN : Number(v)
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback
}
