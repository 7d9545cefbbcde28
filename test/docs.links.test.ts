// The documentation as a reader follows it: README.md is the landing page and docs/*.md the pages
// it leads to. Every link between them must lead somewhere (the file exists, and the heading an
// anchor names is on that page), nothing the README held before the split is lost, the Kafka page
// shows the consumer example as it is in docs/examples/ (where test/docs.kafkaConsumer.test.ts
// runs it), and the README stays a landing page.
import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

const ROOT = process.cwd()
const pages = ['README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => join('docs', f))]

// Pages other work items write; operations.md links them already. They are checked like any
// other page once they exist; until then a link to them is expected, not broken.
const EXPECTED_LATER = new Set(['docs/health-and-recovery.md', 'docs/observability.md', 'docs/projection-throughput.md', 'docs/container-image.md', 'docs/speech-models.md'])

/** A page's text outside fenced code blocks, line by line. */
function prose(markdown: string): string[] {
  let fenced = false
  return markdown.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced
    return !fenced && !line.startsWith('```')
  })
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of prose(markdown)) {
    const m = /^#{1,6} (.*)$/.exec(line)
    if (!m) continue
    const slug = m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '').replace(/ /g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return out
}

const headings = (markdown: string) => new Set(prose(markdown).flatMap((l) => /^#{1,6} (.*)$/.exec(l)?.[1]?.trim() ?? []))

/** The links of a page's prose: [text](target), outside inline code. */
function links(markdown: string): string[] {
  return prose(markdown).flatMap((line) => [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!))
}

// The headings of README.md before it became a landing page (commit ad0843a): the content under
// each moved to a docs page, heading and all.
const README_HEADINGS = [
  "Notes service",
  "Quick start",
  "A clean install",
  "Fuzzing your own deployment",
  "REST API",
  "Accounts and API keys",
  "Limits",
  "Errors",
  "Notes",
  "Folders (extension)",
  "Layout",
  "How a command flows",
  "Event store",
  "Read-model store",
  "Credits",
  "Auditing an account",
  "Kafka analytics topics",
  "MCP server",
  "Tools",
  "Demo endpoint",
  "Authentication and OAuth 2.1",
  "Browser clients (CORS)",
  "Transcripts, translations, speakers and voices",
  "Transcript exports",
  "Transcript edits (extension)",
  "Translations",
  "Speakers",
  "Names in every output",
  "Diarization on the local engines",
  "Voice profiles",
  "Configuration",
  "Analysis, outline, questions and deliverables",
  "Language engines",
  "Analyses",
  "Outline",
  "Highlights and markers (extensions)",
  "Questions",
  "Deliverables",
  "Quality of the local engine",
  "Ingestion and transcription",
  "The rules in short",
  "Jobs on the note stream",
  "Providers (`provider`)",
  "Decoding: ffmpeg and ffprobe, one build",
  "Speech engines",
  "Credits and minutes",
  "Note `errorCode` values",
  "Webhooks",
  "Configuration (transcription pipeline and webhooks)",
  "Tests",
  "Web dashboard",
  "Security",
  "Server-side requests (SSRF)",
  "Media, lengths, deletion and exports (issue 26)",
  "Deleting a note and voice profiles",
  "OAuth, MCP, the free plan and uploads",
  "Running at scale",
  "Process layout",
  "What the replicas share",
  "Behind a load balancer (`TRUST_PROXY`)",
  "Compose start-up order",
  "Health and load shedding",
  "Supervised loops",
  "Idempotent commands and conflicts",
  "Large events: claim check",
  "EventStoreDB connection",
  "Blob storage",
  "Tests",
  "Benchmarks",
]

t.test('given the README and every docs page, then each relative link leads to a file of the repository and each anchor to a heading there', async (t) => {
  for (const page of pages) {
    for (const link of links(readFileSync(page, 'utf8'))) {
      if (/^[a-z]+:/i.test(link)) continue // http(s), mailto: not ours to check
      const [path, anchor] = link.split('#') as [string, string | undefined]
      const target = path === '' ? page : normalize(join(dirname(page), path))
      if (EXPECTED_LATER.has(target) && !existsSync(target)) {
        t.notOk(anchor, `${page} → ${link}: a page still to come is linked without an anchor`)
        continue
      }
      t.ok(existsSync(target) && relative(ROOT, join(ROOT, target)) === target, `${page} → ${link}: ${target} exists`)
      if (anchor && existsSync(target) && statSync(target).isFile() && target.endsWith('.md')) {
        t.ok(anchors(readFileSync(target, 'utf8')).has(anchor), `${page} → ${link}: ${target} has a heading #${anchor}`)
      }
    }
  }
})

t.test('given the README as it was before the docs split, then each of its headings is a heading of the README or a docs page', async (t) => {
  const all = new Set(pages.flatMap((p) => [...headings(readFileSync(p, 'utf8'))]))
  for (const heading of README_HEADINGS) t.ok(all.has(heading), `"${heading}" is still there`)
})

t.test('given the commands and paths the pages name, then each npm script exists and each file of the repository is there', async (t) => {
  const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>
  // A before/after table in DEVELOPING.md names files that a refactoring removed; they are history.
  const HISTORY = new Set(['domain/notes/pipeline.ts', 'app/transcriptionWorker.ts', 'app/webhookWorker.ts'])
  const folders = 'test|scripts|bench|adapters|domain|app|api|mcp|ports|projections|readmodels|commands|workers|engines|contract|web|docs'
  const path = new RegExp(`(?<![\\w./-])((?:${folders})/[\\w./-]*\\.(?:tsx|ts|sh|py|json|md|xml|toml))(?![\\w-])`, 'g')
  for (const page of pages) {
    const text = readFileSync(page, 'utf8')
    for (const [, name] of text.matchAll(/npm run (?:--silent )?([a-z][\w:-]*)/g)) t.ok(scripts[name!], `${page}: npm run ${name} is a script of package.json`)
    for (const [, file] of text.matchAll(path)) {
      if (HISTORY.has(file!) || (EXPECTED_LATER.has(file!) && !existsSync(file!))) continue
      t.ok(existsSync(file!), `${page}: ${file} exists`)
    }
  }
})

t.test('given the Kafka page, then the consumer it shows is the tested file, as it is', async (t) => {
  const example = readFileSync('docs/examples/kafka-consumer.ts', 'utf8').trimEnd()
  t.ok(readFileSync('docs/kafka.md', 'utf8').includes('```ts\n' + example + '\n```'), 'docs/kafka.md shows docs/examples/kafka-consumer.ts verbatim')
  t.ok(example.split('\n').length <= 30, 'short enough to read at a glance')
})

t.test('given the README, then it is a landing page that fits on two screens and leads to every docs page', async (t) => {
  const readme = readFileSync('README.md', 'utf8')
  t.ok(readme.split('\n').length <= 90, `README.md has ${readme.split('\n').length} lines`)
  const linked = new Set(links(readme).map((l) => l.split('#')[0]))
  for (const page of pages.filter((p) => p.startsWith('docs/'))) t.ok(linked.has(page), `the README links ${page}`)
})
