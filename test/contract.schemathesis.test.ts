// The contract against the running service (issue 17, item 4): schemathesis (PyPI, pinned and
// installed by scripts/system-deps.sh) reads GET /v1/openapi.json and sends what it generates
// from it: valid and invalid requests to every operation, undeclared methods, missing
// credentials, and sequences along the document's links. Every check is on; the seed and the
// other settings are in schemathesis.toml (the same file a user fuzzing a deployment uses, see
// docs/api.md, "Fuzzing your own deployment"). The run must end with no failure.
import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { testService } from './support/service.ts'

const root = join(import.meta.dirname, '..')
const schemathesis = join(root, '.ci', 'schemathesis', 'bin', 'schemathesis')
// Enough for every operation to get its coverage cases, random ones and stateful sequences.
const MAX_EXAMPLES = '15'

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })
}

/** Check results of every scenario in the ndjson event log, by status. */
function checkCounts(ndjson: string): Record<string, number> {
  const counts: Record<string, number> = {}
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk)
    if (!v || typeof v !== 'object') return
    for (const [k, x] of Object.entries(v)) {
      if (k === 'checks' && x && typeof x === 'object' && !Array.isArray(x)) {
        for (const list of Object.values(x)) for (const c of list as { status: string }[]) counts[c.status] = (counts[c.status] ?? 0) + 1
      } else walk(x)
    }
  }
  for (const line of ndjson.split('\n')) if (line.trim()) walk(JSON.parse(line))
  return counts
}

t.test('schemathesis finds nothing wrong with the running service', async (t) => {
  t.ok(existsSync(schemathesis), `schemathesis is installed at ${schemathesis} (bash scripts/system-deps.sh installs it)`)
  if (!existsSync(schemathesis)) return
  // Links must resolve to a public address to be imported; names are made up by the generator.
  // (Where they do not, as on a machine without DNS, the 400 that says so is accepted:
  // schemathesis.toml.) The rate limit is raised to keep the run short; the recipe in docs/api.md
  // paces schemathesis under the default limit instead.
  const s = await testService({ resolver: { resolve: async () => ['93.184.216.34'] } })
  t.teardown(s.close)
  // Power: the webhook operations are fuzzed too (other plans get 403 there).
  const a = await s.account('power')
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`
  const reports = mkdtempSync(join(tmpdir(), 'schemathesis-'))
  const json = join(reports, 'report.json')
  const ndjson = join(reports, 'events.ndjson')
  const { code, output } = await run(
    schemathesis,
    [
      '--config-file', join(root, 'schemathesis.toml'),
      'run', `${base}/v1/openapi.json`,
      '--url', base,
      '--header', `Authorization: Bearer ${a.apiKey}`,
      '--checks', 'all',
      '--max-examples', MAX_EXAMPLES,
      '--report', 'json,ndjson', '--report-json-path', json, '--report-ndjson-path', ndjson,
    ],
    reports,
  )
  const report = JSON.parse(readFileSync(json, 'utf8')) as {
    seed: number
    operations: { total: number; tested: number; errored: number }
    test_cases: { generated: number; with_failures: number; errored: number }
    failures: unknown[]
    errors: unknown[]
  }
  const checks = checkCounts(readFileSync(ndjson, 'utf8'))
  t.comment(
    `schemathesis (seed ${report.seed}): ${report.operations.tested}/${report.operations.total} operations, ${report.test_cases.generated} test cases, ` +
      `${checks.success ?? 0} checks passed, ${checks.failure ?? 0} failed`,
  )
  t.equal(code, 0, code === 0 ? 'schemathesis exits 0' : output.slice(-6000))
  t.same(report.failures, [], 'no failure')
  t.same(report.errors, [], 'no error')
  t.equal(report.operations.tested, report.operations.total, 'every operation is tested')
  t.equal(report.operations.errored, 0)
  t.equal(report.test_cases.with_failures, 0)
  t.equal(checks.failure ?? 0, 0, 'no failed check')
  t.ok((checks.success ?? 0) > 1000, 'thousands of checks ran')
})
