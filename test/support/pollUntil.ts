// Waiting for something in a test without sleeping a fixed time: poll a check until it holds,
// with a deadline that names what was awaited when it runs out.

/** Polls `check` every `everyMs` until it answers a truthy value, and returns that value; throws naming `what` after `timeoutMs`. */
export async function pollUntil<T>(what: string, check: () => T | Promise<T>, timeoutMs: number, everyMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await check()
    if (v) return v as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
