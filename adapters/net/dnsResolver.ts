// The host-resolver port over the operating system's resolver (what a download would use).
import { lookup } from 'node:dns/promises'
import type { HostResolver } from '../../ports/hostResolver.ts'

export const systemResolver: HostResolver = {
  async resolve(hostname) {
    const found = await lookup(hostname.replace(/^\[|\]$/g, ''), { all: true, verbatim: true })
    return found.map((a) => a.address)
  },
}
