// Media types as HTTP writes them (RFC 9110 section 8.3.1): `type/subtype` followed by
// `; name=value` parameters. Browsers label recordings with parameters (`MediaRecorder` blobs
// are `audio/webm;codecs=opus`), so uploads are judged by the essence (type/subtype) and keep
// the parameters the client declared.

export interface MediaType {
  type: string
  subtype: string
  /** `type/subtype`, lower case. */
  essence: string
  /** Parameter names lower case, values as sent (unquoted). */
  parameters: Record<string, string>
  /** The essence and parameters in one canonical spelling: `audio/webm;codecs=opus`. */
  canonical: string
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** The parsed media type, or null when `value` is not one. */
export function parseMediaType(value: string): MediaType | null {
  const [head = '', ...rest] = splitParameters(value)
  const slash = head.indexOf('/')
  if (slash < 0) return null
  const type = head.slice(0, slash).trim().toLowerCase()
  const subtype = head.slice(slash + 1).trim().toLowerCase()
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return null
  const parameters: Record<string, string> = {}
  for (const raw of rest) {
    const p = raw.trim()
    if (p === '') continue // `audio/webm;` is allowed
    const eq = p.indexOf('=')
    if (eq <= 0) return null
    const name = p.slice(0, eq).trim().toLowerCase()
    let v = p.slice(eq + 1).trim()
    if (!TOKEN.test(name)) return null
    if (v.startsWith('"')) {
      if (v.length < 2 || !v.endsWith('"')) return null
      v = v.slice(1, -1).replace(/\\(.)/g, '$1')
      if (/[\x00-\x08\x0a-\x1f\x7f]/.test(v)) return null
    } else if (!TOKEN.test(v)) return null
    if (!(name in parameters)) parameters[name] = v
  }
  const essence = `${type}/${subtype}`
  const params = Object.entries(parameters).map(([k, v]) => `;${k}=${TOKEN.test(v) ? v : `"${v.replace(/(["\\])/g, '\\$1')}"`}`)
  return { type, subtype, essence, parameters, canonical: essence + params.join('') }
}

/** Splits at semicolons outside quoted strings. */
function splitParameters(value: string): string[] {
  const parts: string[] = []
  let cur = ''
  let quoted = false
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!
    if (quoted && ch === '\\' && i + 1 < value.length) {
      cur += ch + value[++i]
      continue
    }
    if (ch === '"') quoted = !quoted
    if (ch === ';' && !quoted) {
      parts.push(cur)
      cur = ''
    } else cur += ch
  }
  parts.push(cur)
  return parts
}

/** What an upload may declare: an audio or video type. */
export const isAudioOrVideo = (m: MediaType | null): m is MediaType => m !== null && (m.type === 'audio' || m.type === 'video')
