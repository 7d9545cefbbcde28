// Where a server-side request may go (SSRF protection for imports, feeds and webhooks): the host
// is resolved (an IP literal is its own answer: no resolver gets to reinterpret it) and every
// address must be public or allowlisted (domain/net/addressPolicy.ts). The same check runs when a
// link or webhook is registered and again for every connection and redirect (adapters/net).
import { addressPolicy, isIpLiteral, targetOf } from '../domain/net/addressPolicy.ts'
import type { HostResolver, TargetCheck, TargetResolver } from '../ports/hostResolver.ts'

export function targetResolver(resolver: HostResolver, allowlist: readonly string[]): TargetResolver {
  const check = addressPolicy(allowlist)
  return async (url, options = {}): Promise<TargetCheck> => {
    const target = targetOf(url)
    let addresses: string[]
    if (isIpLiteral(target.host)) addresses = [target.host]
    else {
      try {
        addresses = await resolver.resolve(target.host)
      } catch {
        return { ok: false, unresolvable: true, reason: `the host ${target.host} does not resolve` }
      }
    }
    if (addresses.length === 0) return { ok: false, unresolvable: true, reason: `the host ${target.host} has no address` }
    if (!options.trusted) {
      const refused = addresses.map((ip) => check(target, ip)).filter((r): r is string => r !== null)
      if (refused.length > 0) return { ok: false, unresolvable: false, reason: `it points at a ${refused.join(', ')}` }
    }
    return { ok: true, addresses }
  }
}

/** Why a link may not be called, or null when it may. */
export async function refusedTarget(resolver: HostResolver, url: URL, allowlist: readonly string[]): Promise<string | null> {
  const r = await targetResolver(resolver, allowlist)(url)
  return r.ok ? null : r.reason
}
