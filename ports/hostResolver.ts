// Name resolution, so link checks (SSRF) see the addresses a download would really connect to.
export interface HostResolver {
  /** Every address the name resolves to; rejects when it does not resolve. */
  resolve(hostname: string): Promise<string[]>
}

/** A URL's host resolved and every address checked: where a request may connect, or why not. */
export type TargetCheck = { ok: true; addresses: string[] } | { ok: false; unresolvable: boolean; reason: string }

/** Resolves and checks a URL's host; `trusted` (the operator's own configuration) skips the address check. */
export type TargetResolver = (url: URL, options?: { trusted?: boolean }) => Promise<TargetCheck>
