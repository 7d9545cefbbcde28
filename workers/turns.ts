// Turns at the speech engine, shared fairly: `slots` recognitions at once, and when more jobs
// wait, accounts take turns (round-robin; each account's jobs in the order they asked). A long
// job asks again after each chunk of its audio, so it goes to the back of the line and another
// account's short job runs in between.

export class FairTurns {
  private free: number
  /** Waiting grants per account; the map's order is the rotation. */
  private readonly waiting = new Map<string, (() => void)[]>()

  constructor(slots: number) {
    this.free = Math.max(1, slots)
  }

  /** Resolves with the function that gives the turn back; rejects when `signal` aborts first. */
  acquire(accountId: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted()
    if (this.free > 0 && this.waiting.size === 0) {
      this.free--
      return Promise.resolve(this.giveBack())
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve(this.giveBack())
      }
      const onAbort = () => {
        const q = this.waiting.get(accountId)
        const i = q?.indexOf(grant) ?? -1
        if (q && i >= 0) q.splice(i, 1)
        if (q && q.length === 0) this.waiting.delete(accountId)
        reject(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'))
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      const q = this.waiting.get(accountId)
      if (q) q.push(grant)
      else this.waiting.set(accountId, [grant])
    })
  }

  /** Jobs waiting for a turn now. */
  get queued(): number {
    let n = 0
    for (const q of this.waiting.values()) n += q.length
    return n
  }

  private giveBack() {
    let done = false
    return () => {
      if (done) return
      done = true
      this.free++
      this.next()
    }
  }

  private next() {
    while (this.free > 0 && this.waiting.size > 0) {
      const [accountId, q] = this.waiting.entries().next().value as [string, (() => void)[]]
      const grant = q.shift()!
      // To the back of the rotation, with what it still has waiting.
      this.waiting.delete(accountId)
      if (q.length > 0) this.waiting.set(accountId, q)
      this.free--
      grant()
    }
  }
}
