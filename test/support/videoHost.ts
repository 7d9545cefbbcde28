// A "video host" for the yt-dlp tests: a local web server the import policy admits (by the name
// video.test, or by its exact address and port, as IMPORT_ALLOW_HOSTS would), and the policed
// parts the adapter needs (the address policy, the fetcher). Everything else on 127.0.0.1, in
// any spelling, is judged as what it is: refused.
import { isIP } from 'node:net'
import { targetResolver } from '../../commands/publicTarget.ts'
import { safeHttpFetcher } from '../../adapters/net/safeHttp.ts'
import { ytDlpVideoSite } from '../../adapters/ytdlp/videoSite.ts'
import type { HostResolver } from '../../ports/hostResolver.ts'

export const VIDEO_HOST = 'video.test'

const resolver: HostResolver = {
  async resolve(host) {
    if (isIP(host)) return [host]
    if (host.toLowerCase() === VIDEO_HOST) return ['127.0.0.1']
    throw new Error(`ENOTFOUND ${host}`)
  },
}

/** The yt-dlp adapter under the import policy; `allow` is its IMPORT_ALLOW_HOSTS (video.test by default). */
export function policedVideoSite(allow: string[] = [VIDEO_HOST]) {
  const resolveTarget = targetResolver(resolver, allow)
  const http = safeHttpFetcher({ resolveTarget, connectTimeoutMs: 5000, idleTimeoutMs: 10_000, totalTimeoutMs: 60_000 })
  return ytDlpVideoSite({ resolveTarget, http, connectTimeoutMs: 5000 })
}
