// Small helpers shared by the benchmark scripts (run on demand with `npx tsx bench/<name>.ts`).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
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

/**
 * CPU time (user + system, ms) of every process on the machine, read from /proc (Linux), keyed by
 * pid with its command name; and the machine's busy and total CPU time from /proc/stat. Two
 * snapshots give who used the CPU in between: `cpuBreakdown(before, after, groups)`.
 */
export interface CpuSnapshot {
  procs: Map<number, { comm: string; ms: number }>
  busyMs: number
  totalMs: number
}
const TICK_MS = 10 // USER_HZ is 100 on Linux
export function cpuSnapshot(): CpuSnapshot {
  const procs = new Map<number, { comm: string; ms: number }>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // The command name is in parentheses and may hold spaces; fields after it are space-separated.
      const close = stat.lastIndexOf(')')
      const fields = stat.slice(close + 2).split(' ')
      procs.set(Number(name), { comm: stat.slice(stat.indexOf('(') + 1, close), ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS })
    } catch {
      // The process ended between the listing and the read.
    }
  }
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = cpu as [number, number, number, number, number, number, number, number]
  const busy = user + nice + system + irq + softirq + steal
  return { procs, busyMs: busy * TICK_MS, totalMs: (busy + idle + iowait) * TICK_MS }
}

/**
 * CPU used between two snapshots, summed per group: `groups` maps a label to a test on the pid and
 * command name; the first that matches takes the process, and the rest go to "other processes".
 */
export function cpuBreakdown(before: CpuSnapshot, after: CpuSnapshot, groups: [string, (pid: number, comm: string) => boolean][]): { label: string; ms: number }[] {
  const sums = new Map<string, number>([...groups.map(([label]) => [label, 0] as [string, number]), ['other processes', 0]])
  for (const [pid, { comm, ms }] of after.procs) {
    const used = ms - (before.procs.get(pid)?.ms ?? 0)
    if (used <= 0) continue
    const label = groups.find(([, test]) => test(pid, comm))?.[0] ?? 'other processes'
    sums.set(label, sums.get(label)! + used)
  }
  return [...sums].map(([label, ms]) => ({ label, ms }))
}
