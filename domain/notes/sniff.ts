// What a downloaded body is, from its first bytes (magic numbers), not from the link's extension
// or the server's Content-Type. ffprobe has the last word on media; this tells a feed or a web
// page from media, and refuses bytes no media container starts with.

export type Sniffed = { kind: 'media'; container: string } | { kind: 'feed' } | { kind: 'html' } | { kind: 'unknown' }

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) => sig.every((v, i) => b[at + i] === v)
const ascii = (b: Uint8Array, s: string, at = 0) => startsWith(b, [...s].map((c) => c.charCodeAt(0)), at)

export function sniff(head: Uint8Array): Sniffed {
  const b = head
  if (ascii(b, 'ID3')) return { kind: 'media', container: 'mp3' }
  if (b.length > 1 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) {
    // MPEG audio frame sync, or ADTS AAC (0xFFF1 / 0xFFF9).
    return { kind: 'media', container: (b[1]! & 0xf6) === 0xf0 ? 'aac' : 'mp3' }
  }
  if (ascii(b, 'RIFF') && (ascii(b, 'WAVE', 8) || ascii(b, 'AVI ', 8))) return { kind: 'media', container: ascii(b, 'WAVE', 8) ? 'wav' : 'avi' }
  if (ascii(b, 'OggS')) return { kind: 'media', container: 'ogg' }
  if (ascii(b, 'fLaC')) return { kind: 'media', container: 'flac' }
  if (ascii(b, 'ftyp', 4)) return { kind: 'media', container: 'mp4' }
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return { kind: 'media', container: 'matroska' }
  if (ascii(b, 'FORM') && (ascii(b, 'AIFF', 8) || ascii(b, 'AIFC', 8))) return { kind: 'media', container: 'aiff' }
  if (ascii(b, '#!AMR')) return { kind: 'media', container: 'amr' }
  if (ascii(b, 'caff')) return { kind: 'media', container: 'caf' }
  if (ascii(b, 'FLV')) return { kind: 'media', container: 'flv' }
  if (startsWith(b, [0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11])) return { kind: 'media', container: 'asf' }
  if (startsWith(b, [0x00, 0x00, 0x01, 0xba])) return { kind: 'media', container: 'mpeg-ps' }
  if (b[0] === 0x47 && (b.length < 189 || b[188] === 0x47)) return { kind: 'media', container: 'mpeg-ts' }
  const text = new TextDecoder('utf-8', { fatal: false }).decode(b.subarray(0, 1024)).replace(/^\uFEFF/, '').trimStart().toLowerCase()
  if (text.startsWith('<')) {
    if (/<rss[\s>]/.test(text) || (text.startsWith('<?xml') && text.includes('<rss'))) return { kind: 'feed' }
    if (text.startsWith('<!doctype html') || text.startsWith('<html') || text.includes('<html')) return { kind: 'html' }
    if (text.startsWith('<?xml')) return { kind: 'feed' }
  }
  return { kind: 'unknown' }
}

const MIME_BY_CONTAINER: Readonly<Record<string, [audio: string, video: string]>> = {
  mp3: ['audio/mpeg', 'audio/mpeg'],
  aac: ['audio/aac', 'audio/aac'],
  wav: ['audio/wav', 'audio/wav'],
  ogg: ['audio/ogg', 'video/ogg'],
  flac: ['audio/flac', 'audio/flac'],
  mp4: ['audio/mp4', 'video/mp4'],
  matroska: ['audio/webm', 'video/webm'],
  aiff: ['audio/aiff', 'audio/aiff'],
  amr: ['audio/amr', 'audio/amr'],
  avi: ['video/x-msvideo', 'video/x-msvideo'],
  flv: ['video/x-flv', 'video/x-flv'],
  asf: ['audio/x-ms-wma', 'video/x-ms-asf'],
  'mpeg-ps': ['video/mpeg', 'video/mpeg'],
  'mpeg-ts': ['video/mp2t', 'video/mp2t'],
  caf: ['audio/x-caf', 'audio/x-caf'],
}

/** The media type to serve kept media with, from its first bytes. */
export function mediaTypeOf(head: Uint8Array, hasVideo: boolean): string {
  const s = sniff(head)
  const pair = s.kind === 'media' ? MIME_BY_CONTAINER[s.container] : undefined
  return pair ? pair[hasVideo ? 1 : 0] : 'application/octet-stream'
}
