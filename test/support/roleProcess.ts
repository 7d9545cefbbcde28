// One role of the service as `npm start` runs it (scripts/start.ts) in a child process, for the
// suites that start the roles apart: its output, its health port (HEALTH_PORT=0 gives a free
// port, printed on the `health:` line), and its stop (SIGTERM, then the exit code).
import { spawn, type ChildProcess } from 'node:child_process'
import { embeddedEnv } from './embeddedEnv.ts'

export interface RoleProcess {
  role: string
  child: ChildProcess
  out(): string
  /** The health listener's base URL, once it printed it. */
  healthUrl(): string | null
  /** The process's /readyz (as the operator sees it on the health port). */
  readyz(): Promise<{ status: number; body: Record<string, unknown> & { reasons?: string[] } }>
  stop(signal?: NodeJS.Signals): Promise<number | null>
  exited(): boolean
}

export function startRole(role: string, env: NodeJS.ProcessEnv, options: { base?: NodeJS.ProcessEnv } = {}): RoleProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    env: { ...(options.base ?? embeddedEnv()), SEED_DEMO: '0', HEALTH_PORT: '0', LOG_LEVEL: 'warn', ROLES: role, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const healthUrl = () => /health: (http:\/\/\S+)\/healthz/.exec(out)?.[1] ?? null
  return {
    role,
    child,
    out: () => out,
    healthUrl,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    async readyz() {
      const url = healthUrl()
      if (!url) throw new Error(`${role} has no health port yet:\n${out}`)
      const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) })
      return { status: r.status, body: (await r.json()) as Record<string, unknown> }
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill(signal)
      return exit
    },
  }
}

/** Polls `probe` until it returns a value (not undefined/null/false), or throws after `ms` with what it last saw. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | null | false>, ms = 60_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + ms
  let last: unknown
  for (;;) {
    try {
      const v = await probe()
      if (v !== undefined && v !== null && v !== false) return v
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
