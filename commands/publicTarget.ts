// Where a server-side request may go (SSRF protection for imports and webhooks): every address
// the host resolves to must be public or allowlisted. Returns why not, or null when it may.
import { hostOf, isPermittedAddress } from '../domain/notes/sourceUrl.ts'
import type { HostResolver } from '../ports/hostResolver.ts'

export async function refusedTarget(resolver: HostResolver, url: URL, allowlist: readonly string[]): Promise<string | null> {
  const { host, hostPort } = hostOf(url)
  let addresses: string[]
  try {
    addresses = await resolver.resolve(host)
  } catch {
    return `the host ${host} does not resolve`
  }
  const blocked = addresses.filter((ip) => !isPermittedAddress(host, hostPort, ip, allowlist))
  if (addresses.length === 0 || blocked.length > 0) return `it points at a non-public address (${blocked.join(', ') || 'none'})`
  return null
}
