// The loop every sweeper runs (audio retention, abandoned uploads, orphaned credit holds): one
// pass now and then, never two at once, a failed pass logged and the next one still scheduled (a
// sweeper is supervised by its own timer, never left dead), and a stop that waits for the pass
// under way. Each pass is idempotent, so a pass cut short by a stop or a crash is finished by the
// next one.

export interface PeriodicSweep {
  name: string
  /** One pass now (tests call it instead of waiting for the timer); returns what it changed. */
  runOnce(): Promise<number>
  stop(): Promise<void>
}

export interface PeriodicSweepOptions {
  name: string
  everyMs: number
  /** The first pass: soon after start, so work left by a previous process is not kept waiting. */
  firstAfterMs: number
  /** One pass; `stopped()` turns true when the sweep is being stopped, so a long pass can end early. */
  pass(stopped: () => boolean): Promise<number>
  /** The log line for a pass that changed `n` things (none when nothing changed). */
  describe?(n: number): string
  log?(msg: string): void
}

export function startPeriodicSweep(options: PeriodicSweepOptions): PeriodicSweep {
  const log = options.log ?? (() => {})
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> = Promise.resolve()
  let stopped = false
  const runOnce = () => options.pass(() => stopped)

  const tick = () => {
    running = runOnce()
      .then((n) => {
        if (n > 0 && options.describe) log(`[${options.name}] ${options.describe(n)}`)
      })
      .catch((err) => log(`[${options.name}] pass failed: ${(err as Error).message}`))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.everyMs)
      })
  }
  timer = setTimeout(tick, Math.min(options.everyMs, options.firstAfterMs))

  return {
    name: options.name,
    runOnce,
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
