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

const TOKEN_CHARS = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const TOKEN = new RegExp(`^${TOKEN_CHARS}$`)
const OWS = '[ \\t]*'
const QUOTED = '"(?:[^"\\\\\\x00-\\x08\\x0a-\\x1f\\x7f]|\\\\[^\\x00-\\x08\\x0a-\\x1f\\x7f])*"'
const PARAMETERS = `(?:;${OWS}(?:${TOKEN_CHARS}=(?:${TOKEN_CHARS}|${QUOTED})${OWS})?)*`
/** The whole grammar as a pattern, with `type` given (a case-insensitive alternative) or any token. */
export const mediaTypePattern = (types?: readonly string[]) => {
  const type = types ? `(?:${types.map((t) => [...t].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('')).join('|')})` : TOKEN_CHARS
  return new RegExp(`^${OWS}${type}/${TOKEN_CHARS}${OWS}${PARAMETERS}$`)
}
const MEDIA_TYPE = mediaTypePattern()

/** The parsed media type, or null when `value` is not one. */
export function parseMediaType(value: string): MediaType | null {
  if (!MEDIA_TYPE.test(value)) return null
  const [head = '', ...rest] = splitParameters(value)
  const slash = head.indexOf('/')
  const type = head.slice(0, slash).trim().toLowerCase()
  const subtype = head.slice(slash + 1).trim().toLowerCase()
  const parameters: Record<string, string> = {}
  for (const raw of rest) {
    const p = raw.trim()
    if (p === '') continue // `audio/webm;` is allowed
    const eq = p.indexOf('=')
    const name = p.slice(0, eq).toLowerCase()
    let v = p.slice(eq + 1)
    if (v.startsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, '$1')
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

/** The pattern of what an upload may declare (the contract states it). */
export const AUDIO_OR_VIDEO_TYPE = mediaTypePattern(['audio', 'video'])
