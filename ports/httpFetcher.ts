// Outgoing HTTP for imports. Every request (and every redirect) is checked against the SSRF
// rules at the moment it is made: the host is resolved, every address checked, and the
// connection goes to the checked address, so a second DNS answer cannot slip past the check.
// Failures are PipelineFailure with the note's errorCode.

export interface FetchLimits {
  maxBytes: number
  signal?: AbortSignal
  /** Skip the address check: for URLs from the operator's own configuration. */
  trusted?: boolean
  accept?: string
  /** Extra request headers a media host may need (user-agent, referer, origin, accept-language only). */
  headers?: Readonly<Record<string, string>>
}

export interface Downloaded {
  finalUrl: string
  contentType: string | null
  bytes: number
}

export interface FetchedText {
  finalUrl: string
  contentType: string | null
  body: string
}

export interface HttpFetcher {
  /** Streams the body to `destPath`; `onProgress` sees bytes so far and the announced total. */
  download(url: string, destPath: string, limits: FetchLimits & { onProgress?: (bytes: number, total: number | null) => void }): Promise<Downloaded>
  text(url: string, limits: FetchLimits): Promise<FetchedText>
}
