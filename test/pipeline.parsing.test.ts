// The pure pieces of the pipeline: caption formats, speaker labels, content sniffing, episode
// choice, feed reading, language names.
import t from 'tap'
import { parseVtt, parseSrt, parsePodcastJson, captionFormatOf, speakerLabel, assignSpeakerLabels, withNamePrefixes } from '../domain/notes/captions.ts'
import { sniff } from '../domain/notes/sniff.ts'
import { chooseEpisode } from '../domain/notes/episodes.ts'
import { normalizeLanguage, detectTextLanguage } from '../domain/languages.ts'
import { viewSpeaker, emptySpeaker } from '../domain/speakers/speakers.ts'
import { fastXmlPodcastFeedParser, parseItunesDuration } from '../adapters/xml/podcastFeed.ts'
import { assembleTranscript } from '../domain/notes/assemble.ts'
import { wavBytes } from './support/media.ts'

t.test('WebVTT: cues, voice tags (with classes), entities, inline tags, NOTE/STYLE blocks, mm:ss times', async (t) => {
  const cues = parseVtt(`WEBVTT - a title

STYLE
::cue { color: red }

NOTE this is ignored

intro
00:01.000 --> 00:03.500 align:start position:10%
<v.host Ana María>Hola <i>a todos</i> &amp; bienvenidos</v>

00:00:04.000 --> 00:00:05.000
<c.yellow>No voice</c> <00:00:04.500>here

00:00:06.000 --> 00:00:07.000
<v Bob>Line one
line two</v>
`)
  t.same(cues, [
    { startMs: 1000, endMs: 3500, text: 'Hola a todos & bienvenidos', speaker: 'Ana María' },
    { startMs: 4000, endMs: 5000, text: 'No voice here', speaker: null },
    { startMs: 6000, endMs: 7000, text: 'Line one line two', speaker: 'Bob' },
  ])
  t.throws(() => parseVtt('1\n00:00:01,000 --> 00:00:02,000\nhi'), /WEBVTT/)
})

t.test('SubRip and the podcast JSON transcript', async (t) => {
  t.same(parseSrt('1\r\n00:00:01,250 --> 00:00:02,000\r\n<i>Hello</i>\r\nthere\r\n\r\n2\r\n01:00:00,000 --> 01:00:01,000\r\nLater\r\n'), [
    { startMs: 1250, endMs: 2000, text: 'Hello there', speaker: null },
    { startMs: 3600000, endMs: 3601000, text: 'Later', speaker: null },
  ])
  t.same(parsePodcastJson(JSON.stringify({ version: '1.0.0', segments: [{ speaker: 'Alice', startTime: 0.5, endTime: 1.25, body: 'Hi' }, { startTime: 2, endTime: 3, body: ' there ' }, { startTime: 'x', body: 'bad' }] })), [
    { startMs: 500, endMs: 1250, text: 'Hi', speaker: 'Alice' },
    { startMs: 2000, endMs: 3000, text: 'there', speaker: null },
  ])
  t.equal(captionFormatOf('text/vtt; charset=utf-8'), 'vtt')
  t.equal(captionFormatOf('application/x-subrip'), 'srt')
  t.equal(captionFormatOf('application/json'), 'json')
  t.equal(captionFormatOf('text/html'), null)
})

const srt = (...lines: string[]) => lines.map((l, i) => `${i + 1}\n00:00:0${i},000 --> 00:00:0${i},900\n${l}\n`).join('\n')

t.test('given SubRip lines with `Name: ` prefixes, then the names become the speakers and leave the text', async (t) => {
  const cues = parseSrt(srt('Alice Walker: Welcome back.', 'BOB: Thanks, Alice.', 'It is good to be here.', '>> Alice Walker: Let us start.', 'bob: lower case is not a name prefix'))
  t.same(
    cues.map((c) => [c.speaker, c.text]),
    [
      ['Alice Walker', 'Welcome back.'],
      ['BOB', 'Thanks, Alice.'],
      ['BOB', 'It is good to be here.'],
      ['Alice Walker', 'Let us start.'],
      ['Alice Walker', 'bob: lower case is not a name prefix'],
    ],
    'a line without a prefix continues the speaker before it',
  )
  t.same(parseSrt(srt('José María: Hola.', 'ANA: Buenas.', 'Ana: ¿Qué tal?')).map((c) => c.speaker), ['José María', 'ANA', 'ANA'], 'any script; one spelling per name')
})

t.test('given captions where a colon is not a speaker convention, then nothing is invented', async (t) => {
  const cues = parseSrt(srt('Note: the audio starts late.', 'Welcome to the show.', 'Today we talk budgets.', 'And then hiring.'))
  t.same(cues.map((c) => c.speaker), [null, null, null, null], 'one stray prefix is no convention')
  t.same(parseSrt(srt('Warning: loud.', 'Warning: louder.')).map((c) => c.speaker), [null, null], 'known non-names')
  t.same(parseSrt(srt('At 10:30 we met.', 'Then at 11:00 again.')).map((c) => c.speaker), [null, null])
  const tagged = withNamePrefixes([{ startMs: 0, endMs: 1, text: 'Ann: hi', speaker: 'Voice Tag' }, { startMs: 1, endMs: 2, text: 'Ann: again', speaker: null }])
  t.same(tagged.map((c) => c.speaker), ['Voice Tag', null], 'voice tags win: prefixes are read only without them')
  t.same(parseVtt('WEBVTT\n\n00:01.000 --> 00:02.000\nAna: Hola.\n\n00:02.000 --> 00:03.000\nLuis: Buenas.\n\n00:03.000 --> 00:04.000\nAna: Sí.\n').map((c) => [c.speaker, c.text]), [
    ['Ana', 'Hola.'],
    ['Luis', 'Buenas.'],
    ['Ana', 'Sí.'],
  ], 'WebVTT without voice tags too')
})

t.test('given a text with no declared language, then its language is detected only when it is clear', async (t) => {
  t.equal(detectTextLanguage('Welcome to the show. Today we are going to talk about the budget and what it means for all of us here.'), 'en')
  t.equal(detectTextLanguage('Bienvenidos al programa. Hoy vamos a hablar del presupuesto y de lo que significa para todos nosotros.'), 'es')
  t.equal(detectTextLanguage('Willkommen zur Sendung. Heute sprechen wir über das Budget und was es für uns alle bedeutet, nicht wahr.'), 'de')
  t.equal(detectTextLanguage('Hello there.'), null, 'too short to tell')
  t.equal(detectTextLanguage('Witamy w programie. Dzisiaj porozmawiamy o budżecie i o tym, co oznacza dla nas wszystkich.'), null, 'none of the six')
})

t.test('given a published speaker name, then it is the name in use, suggested with published evidence, until the user confirms one', async (t) => {
  const published = { ...emptySpeaker('A'), published: 'Alice Walker' }
  t.match(viewSpeaker(published), { name: 'Alice Walker', nameStatus: 'suggested', suggestedName: 'Alice Walker', suggestedNameConfidence: 1, evidence: [{ source: 'published', segment: null, quote: 'Alice Walker' }] })
  t.match(viewSpeaker({ ...published, confirmedName: 'Alice W.' }), { name: 'Alice W.', nameStatus: 'confirmed' })
  t.match(viewSpeaker({ ...published, inferred: { name: 'Bob', confidence: 0.9, evidence: [] } }), { name: 'Alice Walker' }, 'content inference does not outrank the source')
  t.match(viewSpeaker({ ...emptySpeaker('B') }), { name: null, evidence: [] })
})

t.test('speaker labels are A, B, C... in order of first appearance; nobody is invented', async (t) => {
  t.same([0, 1, 25, 26, 27].map(speakerLabel), ['A', 'B', 'Z', 'AA', 'AB'])
  const { labels, names } = assignSpeakerLabels(['Bob', null, 'Ann', 'Bob'])
  t.same(labels, ['A', null, 'B', 'A'])
  t.same(Object.fromEntries(names), { A: 'Bob', B: 'Ann' })
  const tr = assembleTranscript({
    noteId: 'n',
    jobId: 'j',
    segments: [
      { startMs: 2000, endMs: 3000, text: ' second ', speaker: null, confidence: 2, words: null },
      { startMs: 0, endMs: 1000, text: 'first', speaker: null, confidence: null, words: [{ text: 'first', startMs: 0, endMs: 900 }] },
      { startMs: 1500, endMs: 1600, text: '   ', speaker: null, confidence: null, words: null },
    ],
    speakersAreNames: false,
    language: 'en',
    languagesDetected: ['en', 'en'],
    durationSeconds: 3,
    engine: 'e',
    provider: null,
    model: null,
  })
  t.same(tr.segments.map((s) => [s.sequence, s.text, s.speakerLabel, s.confidence]), [
    [0, 'first', null, null],
    [1, 'second', null, 1],
  ])
  t.same(tr.languagesDetected, ['en'])
  t.notOk('speakerNames' in tr)
  t.equal(assembleTranscript({ ...(tr as any), noteId: 'n', jobId: 'j', segments: [{ startMs: 0, endMs: 1, text: 'x', speaker: null, confidence: null, words: null }], speakersAreNames: false, languagesDetected: [] }).segments[0]!.id, tr.segments[0]!.id, 'segment ids are stable per job')
})

t.test('sniffing tells media from feeds and pages by the bytes, not the name', async (t) => {
  t.match(sniff(wavBytes(0.1)), { kind: 'media', container: 'wav' })
  t.match(sniff(Buffer.from('ID3\x04\x00')), { kind: 'media', container: 'mp3' })
  t.match(sniff(Buffer.from([0xff, 0xfb, 0x90, 0x00])), { kind: 'media', container: 'mp3' })
  t.match(sniff(Buffer.from([0xff, 0xf1, 0x50, 0x80])), { kind: 'media', container: 'aac' })
  t.match(sniff(Buffer.from('\x00\x00\x00\x20ftypisom')), { kind: 'media', container: 'mp4' })
  t.match(sniff(Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x01])), { kind: 'media', container: 'matroska' })
  t.match(sniff(Buffer.from('OggS\x00')), { kind: 'media' })
  t.match(sniff(Buffer.from('\uFEFF  <?xml version="1.0"?><rss version="2.0">')), { kind: 'feed' })
  t.match(sniff(Buffer.from('<!DOCTYPE html><html>')), { kind: 'html' })
  t.match(sniff(Buffer.from('just text')), { kind: 'unknown' })
  t.match(sniff(Buffer.from('{"json": true}')), { kind: 'unknown' })
})

const ep = (guid: string, publishedAt: string | null, extra: Partial<{ link: string; enclosure: { url: string } | null }> = {}) => ({
  guid,
  link: extra.link ?? null,
  enclosure: extra.enclosure === undefined ? { url: `https://cdn.example.org/${guid}.mp3` } : extra.enclosure,
  transcripts: [],
  publishedAt,
})

t.test('episode choice: the newest, or the one the fragment names by guid, link or enclosure', async (t) => {
  const eps = [ep('a', '2025-01-01T00:00:00.000Z'), ep('b', '2025-03-01T00:00:00.000Z', { link: 'https://show.example.org/episodes/42' }), ep('c', null), ep('d', '2026-01-01T00:00:00.000Z', { enclosure: null })]
  t.equal(chooseEpisode(eps, null)!.guid, 'b', 'newest with audio')
  t.equal(chooseEpisode(eps, 'a')!.guid, 'a')
  t.equal(chooseEpisode(eps, '42')!.guid, 'b', 'by the end of its link')
  t.equal(chooseEpisode(eps, 'https://cdn.example.org/c.mp3')!.guid, 'c', 'by enclosure URL')
  t.equal(chooseEpisode(eps, 'nope'), null)
  t.equal(chooseEpisode([ep('x', null), ep('y', null)], null)!.guid, 'x', 'feed order without dates')
})

t.test('feed reading: items, enclosure, itunes fields, podcast:transcript, CDATA; not-RSS is refused', async (t) => {
  const feed = fastXmlPodcastFeedParser.parse(`<?xml version="1.0"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel><title>Show &amp; Tell</title><language>es-ES</language>
<item><title><![CDATA[Ep <1>]]></title><guid isPermaLink="false">g1</guid><pubDate>Tue, 10 Jun 2025 08:00:00 +0200</pubDate>
<enclosure url="https://cdn.example.org/1.mp3" length="1234" type="audio/mpeg"/><itunes:duration>1:02:03</itunes:duration>
<podcast:transcript url="https://cdn.example.org/1.vtt" type="text/vtt" language="es"/>
<podcast:transcript url="https://cdn.example.org/1.json" type="application/json" rel="captions"/></item>
</channel></rss>`)
  t.match(feed, { title: 'Show & Tell', language: 'es-ES' })
  t.match(feed.episodes[0], {
    guid: 'g1',
    title: 'Ep <1>',
    publishedAt: '2025-06-10T06:00:00.000Z',
    durationSeconds: 3723,
    enclosure: { url: 'https://cdn.example.org/1.mp3', type: 'audio/mpeg', length: 1234 },
    transcripts: [
      { url: 'https://cdn.example.org/1.vtt', type: 'text/vtt', language: 'es' },
      { url: 'https://cdn.example.org/1.json', type: 'application/json', rel: 'captions' },
    ],
  })
  t.same([parseItunesDuration('45'), parseItunesDuration('10:00'), parseItunesDuration('x')], [45, 600, null])
  t.throws(() => fastXmlPodcastFeedParser.parse('<html><body>no</body></html>'), /not an RSS feed/)
})

t.test('language names and codes', async (t) => {
  t.same(['english', 'Spanish', 'en', 'es-es', 'pt_BR', 'klingon', '', null].map((x) => normalizeLanguage(x as string)), ['en', 'es', 'en', 'es-ES', 'pt-BR', null, null, null])
})
