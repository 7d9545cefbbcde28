// The HTTP fetcher for imports over node:http/https. Each hop (the first request and every
// redirect, at most `maxRedirects`) resolves the host and checks every address (the injected
// TargetResolver: public or allowlisted, judged on parsed addresses, IPv6 spellings of IPv4 by
// the IPv4 they carry), refuses it when any address fails, and then connects to the address it
// checked (a pinned `lookup`; an IP literal is connected to as checked), so DNS rebinding between
// check and connect is impossible. TLS still verifies the
// certificate against the host name. Bodies are capped while they stream; connect, idle and total
// timeouts bound a slow server.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import { isIP, type LookupFunction } from 'node:net'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { TargetResolver } from '../../ports/hostResolver.ts'
import type { Downloaded, FetchedText, FetchLimits, HttpFetcher } from '../../ports/httpFetcher.ts'
import { PipelineFailure } from '../../ports/pipelineFailure.ts'
import type { WebhookTransport } from '../../ports/webhookTransport.ts'

export interface SafeHttpOptions {
  /** Resolves a URL's host and checks every address (SSRF policy). */
  resolveTarget: TargetResolver
  connectTimeoutMs: number
  /** No byte for this long: the transfer is abandoned. */
  idleTimeoutMs: number
  totalTimeoutMs: number
  maxRedirects?: number
  userAgent?: string
}

const RETRIABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504])

async function pinnedAddress(options: SafeHttpOptions, url: URL, trusted: boolean): Promise<{ address: string; family: 4 | 6 }> {
  const checked = await options.resolveTarget(url, { trusted })
  if (!checked.ok && checked.unresolvable) throw new PipelineFailure('download_failed', `Could not reach ${url.hostname}: ${checked.reason}.`, true)
  if (!checked.ok) throw new PipelineFailure('source_blocked', `${url.hostname} is refused: ${checked.reason}; only public addresses can be called.`)
  const address = checked.addresses[0]!
  return { address, family: isIP(address) === 6 ? 6 : 4 }
}

/** Where a redirect leads; a Location that is no URL is the source's fault, not a passing one. */
function redirectTarget(location: string, from: URL): URL {
  try {
    return new URL(location, from)
  } catch {
    throw new PipelineFailure('source_url_invalid', `${from.host} redirects to ${JSON.stringify(location.slice(0, 200))}, which is not a URL.`)
  }
}

const PASSED_HEADERS = new Set(['user-agent', 'referer', 'origin', 'accept-language'])
const passedHeaders = (h: Readonly<Record<string, string>> | undefined) =>
  Object.fromEntries(Object.entries(h ?? {}).filter(([k, v]) => PASSED_HEADERS.has(k.toLowerCase()) && !/[\r\n]/.test(v)).map(([k, v]) => [k.toLowerCase(), v]))

/** A `lookup` that answers with the address that was checked, in both of Node's callback shapes. */
function pinnedLookup(pinned: { address: string; family: 4 | 6 }): LookupFunction {
  return ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: pinned.address, family: pinned.family }])
    else cb(null, pinned.address, pinned.family)
  }) as unknown as LookupFunction
}

export function safeHttpFetcher(options: SafeHttpOptions): HttpFetcher {
  const maxRedirects = options.maxRedirects ?? 5

  /** One hop: resolves, checks, connects to the checked address; resolves with the response head. */
  async function hop(url: URL, limits: FetchLimits, signal: AbortSignal): Promise<IncomingMessage> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PipelineFailure('source_blocked', `Only http(s) links can be imported, not ${url.protocol}`)
    if (url.username || url.password) throw new PipelineFailure('source_blocked', 'Links with credentials are not followed.')
    const lookup = pinnedLookup(await pinnedAddress(options, url, limits.trusted ?? false))
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(url, {
        method: 'GET',
        lookup,
        signal,
        headers: { 'user-agent': options.userAgent ?? 'notes-service-importer/1.0', ...passedHeaders(limits.headers), accept: limits.accept ?? '*/*', 'accept-encoding': 'identity' },
      })
      const connectTimer = setTimeout(() => req.destroy(new PipelineFailure('download_failed', `No answer from ${url.host} within ${options.connectTimeoutMs} ms.`, true)), options.connectTimeoutMs)
      req.on('response', (res) => {
        clearTimeout(connectTimer)
        resolve(res)
      })
      req.on('error', (err) => {
        clearTimeout(connectTimer)
        reject(err)
      })
      req.end()
    })
  }

  /** Follows redirects (each re-checked); returns a 2xx response. */
  async function open(raw: string, limits: FetchLimits, signal: AbortSignal): Promise<{ res: IncomingMessage; finalUrl: string }> {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw new PipelineFailure('source_not_found', `Not a URL: ${raw.slice(0, 200)}`)
    }
    for (let redirects = 0; ; redirects++) {
      let res: IncomingMessage
      try {
        res = await hop(url, limits, signal)
      } catch (err) {
        throw asFailure(err, url)
      }
      const status = res.statusCode ?? 0
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume()
        if (redirects >= maxRedirects) throw new PipelineFailure('download_failed', `More than ${maxRedirects} redirects from ${raw.slice(0, 200)}.`)
        url = redirectTarget(res.headers.location, url)
        continue
      }
      if (status >= 200 && status < 300) return { res, finalUrl: url.href }
      res.resume()
      if (status === 404 || status === 410 || status === 401 || status === 403 || status === 451) {
        throw new PipelineFailure('source_not_found', `${url.host} answered ${status} for ${url.pathname.slice(0, 200)}.`)
      }
      throw new PipelineFailure('download_failed', `${url.host} answered ${status}.`, RETRIABLE_STATUS.has(status) || status >= 500)
    }
  }

  function asFailure(err: unknown, url: URL): PipelineFailure {
    if (err instanceof PipelineFailure) return err
    const e = err as { name?: string; code?: string; message?: string }
    if (e.name === 'AbortError') return new PipelineFailure('download_failed', `The download from ${url.host} was stopped.`, true)
    return new PipelineFailure('download_failed', `Could not fetch from ${url.host}: ${e.code ?? e.message ?? String(err)}.`, true)
  }

  /** Runs `fn` under the caller's signal plus the total timeout. */
  async function bounded<T>(limits: FetchLimits, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ac = new AbortController()
    const timer = setTimeout(() => ac.abort(new PipelineFailure('download_failed', `The transfer took longer than ${options.totalTimeoutMs} ms.`, true)), options.totalTimeoutMs)
    const onAbort = () => ac.abort(limits.signal?.reason)
    limits.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      return await fn(ac.signal)
    } catch (err) {
      if (ac.signal.aborted && ac.signal.reason instanceof PipelineFailure) throw ac.signal.reason
      throw err
    } finally {
      clearTimeout(timer)
      limits.signal?.removeEventListener('abort', onAbort)
    }
  }

  function meter(res: IncomingMessage, maxBytes: number, url: string, onBytes: (n: number) => void) {
    const announced = Number(res.headers['content-length'])
    if (Number.isFinite(announced) && announced > maxBytes) {
      res.destroy()
      throw new PipelineFailure('source_too_large', `The source announces ${announced} bytes; at most ${maxBytes} are allowed.`)
    }
    let bytes = 0
    let idle: NodeJS.Timeout
    const arm = (t: Transform) => {
      clearTimeout(idle)
      idle = setTimeout(() => t.destroy(new PipelineFailure('download_failed', `No data from ${new URL(url).host} for ${options.idleTimeoutMs} ms.`, true)), options.idleTimeoutMs)
    }
    const t: Transform = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length
        if (bytes > maxBytes) return done(new PipelineFailure('source_too_large', `The source is larger than the ${maxBytes} bytes allowed.`))
        arm(t)
        onBytes(bytes)
        done(null, chunk)
      },
      flush(done) {
        clearTimeout(idle)
        done()
      },
      destroy(err, cb) {
        clearTimeout(idle)
        cb(err)
      },
    })
    arm(t)
    return { stream: t, total: Number.isFinite(announced) ? announced : null, bytes: () => bytes }
  }

  return {
    download(url, destPath, limits): Promise<Downloaded> {
      return bounded(limits, async (signal) => {
        const { res, finalUrl } = await open(url, limits, signal)
        const m = meter(res, limits.maxBytes, finalUrl, (n) => limits.onProgress?.(n, m.total))
        try {
          await pipeline(res, m.stream, createWriteStream(destPath))
        } catch (err) {
          await rm(destPath, { force: true })
          throw asFailure(err, new URL(finalUrl))
        }
        return { finalUrl, contentType: res.headers['content-type'] ?? null, bytes: m.bytes() }
      })
    },
    text(url, limits): Promise<FetchedText> {
      return bounded(limits, async (signal) => {
        const { res, finalUrl } = await open(url, limits, signal)
        const m = meter(res, limits.maxBytes, finalUrl, () => {})
        const chunks: Buffer[] = []
        try {
          await pipeline(res, m.stream, async (source: AsyncIterable<Buffer>) => {
            for await (const c of source) chunks.push(c)
          })
        } catch (err) {
          throw asFailure(err, new URL(finalUrl))
        }
        return { finalUrl, contentType: res.headers['content-type'] ?? null, body: Buffer.concat(chunks).toString('utf8') }
      })
    },
  }
}

/**
 * Webhook calls: a POST to the endpoint's URL, checked and pinned like the downloads, with no
 * redirect followed (a redirect is a failed try) and a timeout. Resolves with the status, or
 * with the error for a try that got no answer.
 */
const RESPONSE_EXCERPT_BYTES = 500

export function safeWebhookTransport(options: SafeHttpOptions): WebhookTransport {
  return {
    async post(raw, body, headers, timeoutMs) {
      const started = Date.now()
      const done = (statusCode: number | null, error: string | null, responseExcerpt: string | null = null) => ({ statusCode, error, durationMs: Date.now() - started, responseExcerpt })
      let url: URL
      try {
        url = new URL(raw)
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return done(null, `unsupported protocol ${url.protocol}`)
      } catch {
        return done(null, 'invalid URL')
      }
      let lookup: LookupFunction
      try {
        lookup = pinnedLookup(await pinnedAddress(options, url, false))
      } catch (err) {
        return done(null, (err as Error).message)
      }
      const request = url.protocol === 'https:' ? httpsRequest : httpRequest
      return new Promise((resolve) => {
        const req = request(url, {
          method: 'POST',
          lookup,
          timeout: timeoutMs,
          headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': options.userAgent ?? 'notes-service-webhooks/1.0', ...headers },
        })
        const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
        req.on('response', (res) => {
          // Only the start of the answer is kept (for the delivery log); read a little more so the socket is released.
          let seen = 0
          const kept: Buffer[] = []
          res.on('data', (c: Buffer) => {
            if (seen < RESPONSE_EXCERPT_BYTES) kept.push(c.subarray(0, RESPONSE_EXCERPT_BYTES - seen))
            seen += c.length
            if (seen > 64 * 1024) res.destroy()
          })
          res.on('close', () => (clearTimeout(timer), resolve(done(res.statusCode ?? null, null, Buffer.concat(kept).toString('utf8').replace(/\uFFFD+$/, '')))))
          res.on('error', () => {})
        })
        req.on('error', (err) => (clearTimeout(timer), resolve(done(null, (err as NodeJS.ErrnoException).code ?? err.message))))
        req.end(body)
      })
    },
  }
}
