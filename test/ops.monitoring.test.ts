// The monitoring files shipped in ops/ (issue 30): the Prometheus alert rules and scrape config,
// and the Grafana dashboard, checked against what the service really exposes, so a renamed
// metric cannot leave an alert or a panel reading nothing. With promtool on PATH or in PROMTOOL
// (`eval "$(bash scripts/servers/promtool.sh install)"` builds it), the rules also go through
// `promtool check rules` and their unit tests, and the scrape config through `promtool check config`.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { delimiter, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { prometheusRegistry } from '../adapters/prometheus/registry.ts'
import { installMetrics, noopRegistry } from '../ports/metrics.ts'
import { tempDir } from './support/tmp.ts'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const read = (p: string) => readFileSync(join(root, p), 'utf8')

type Rule = { alert?: string; record?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
const rules = parse(read('ops/prometheus/alerts.yml')) as { groups: { name: string; rules: Rule[] }[] }

/** Every metric name a process can expose: the catalogue, the gauges app/telemetry.ts adds, prom-client's process metrics. */
async function exposedNames(): Promise<Set<string>> {
  const names = new Set<string>()
  installMetrics(prometheusRegistry())
  const { body } = await (await import('../ports/metrics.ts')).metrics().registry.render()
  installMetrics(noopRegistry)
  for (const m of body.matchAll(/^# TYPE (\w+) (\w+)$/gm)) names.add(m[1]!).add(m[2] === 'histogram' || m[2] === 'summary' ? `${m[1]}_count` : m[1]!)
  for (const m of read('app/telemetry.ts').matchAll(/'(notes_\w+)'/g)) names.add(m[1]!)
  for (const n of [...names]) for (const suffix of ['_bucket', '_sum', '_count']) if (body.includes(`# TYPE ${n} histogram`)) names.add(n + suffix)
  return names
}

/** The metric names an expression reads (ours all start with notes_). */
const metricsIn = (expr: string) => [...new Set([...expr.matchAll(/\b(notes_\w+)/g)].map((m) => m[1]!))]

t.test('every alert rule is complete and reads metrics the service exposes', async (t) => {
  const names = await exposedNames()
  const all = rules.groups.flatMap((g) => g.rules)
  t.ok(all.length >= 10, `${all.length} rules`)
  const alerts = all.map((r) => r.alert)
  t.equal(new Set(alerts).size, alerts.length, 'alert names are unique')
  for (const r of all) {
    t.ok(r.alert, 'an alert, not a recording rule')
    t.match(r.labels?.severity, /^(warning|critical)$/, `${r.alert}: severity`)
    t.ok(r.annotations?.summary && r.annotations.description, `${r.alert}: summary and description`)
    t.match(r.for ?? '0m', /^\d+[smh]$/, `${r.alert}: for`)
    for (const m of metricsIn(r.expr)) t.ok(names.has(m), `${r.alert} reads ${m}`)
  }
  // What an operator needs to be woken for: each area of issue 30 has an alert.
  const exprs = all.map((r) => r.expr).join('\n')
  for (const m of ['notes_http_requests_total', 'notes_http_request_duration_seconds_bucket', 'notes_event_store_errors_total', 'notes_projection_lag_seconds', 'notes_kafka_publish_failures_total', 'notes_transcription_oldest_job_age_seconds', 'notes_transcription_jobs_total', 'notes_speech_real_time_factor_bucket', 'notes_webhook_deliveries_total']) {
    t.ok(exprs.includes(m), `an alert on ${m}`)
  }
})

t.test('the Grafana dashboard loads from the provisioned data source and reads exposed metrics', async (t) => {
  const names = await exposedNames()
  const dashboard = JSON.parse(read('ops/grafana/dashboards/notes-service.json')) as { uid: string; panels: { type: string; title: string; datasource?: { uid: string }; targets?: { expr: string }[] }[] }
  const source = (parse(read('ops/grafana/provisioning/datasources/prometheus.yml')) as { datasources: { uid: string; url: string }[] }).datasources[0]!
  t.equal(source.url, 'http://prometheus:9090', 'the data source is the compose service')
  const panels = dashboard.panels.filter((p) => p.type !== 'row')
  t.ok(panels.length >= 15, `${panels.length} panels`)
  const read_ = new Set<string>()
  for (const p of panels) {
    t.equal(p.datasource?.uid, source.uid, `${p.title}: the provisioned data source`)
    for (const target of p.targets ?? []) for (const m of metricsIn(target.expr)) (read_.add(m), t.ok(names.has(m), `${p.title} reads ${m}`))
  }
  for (const m of ['notes_http_requests_total', 'notes_event_store_duration_seconds_bucket', 'notes_projection_lag_seconds', 'notes_kafka_publish_failures_total', 'notes_transcription_queue_depth', 'notes_transcription_oldest_job_age_seconds', 'notes_transcription_jobs_total', 'notes_speech_real_time_factor_bucket', 'notes_webhook_deliveries_total', 'notes_credit_operations_total']) {
    t.ok(read_.has(m), `a panel shows ${m}`)
  }
})

t.test('Prometheus scrapes every process of the compose stack where it serves /metrics', async (t) => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, { environment?: Record<string, string>; volumes?: string[] }> }
  const config = parse(read('ops/prometheus/prometheus.yml')) as { rule_files: string[]; scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[] }
  const targets = config.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets))
  for (const role of ['api', 'projections', 'forwarder', 'workers']) {
    const port = compose.services[role]!.environment!.METRICS_PORT
    t.ok(port, `${role} has an operator listener`)
    t.ok(targets.includes(`${role}:${port}`), `${role}:${port} is scraped`)
  }
  const mounts = compose.services.prometheus!.volumes!
  for (const file of config.rule_files) t.ok(mounts.some((v) => v.endsWith(`:${file}:ro`)), `${file} is mounted`)
})

const promtool = process.env.PROMTOOL ?? (process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'promtool')).find((p) => existsSync(p))
if (!promtool) t.comment('promtool is not installed (set PROMTOOL or put it on PATH): the rules are not run through promtool')
else {
  t.test('promtool accepts the rules and their unit tests pass', async (t) => {
    const check = execFileSync(promtool, ['check', 'rules', join(root, 'ops/prometheus/alerts.yml')], { encoding: 'utf8' })
    t.match(check, /SUCCESS/)
    const unit = execFileSync(promtool, ['test', 'rules', 'alerts.test.yml'], { encoding: 'utf8', cwd: join(root, 'ops/prometheus') })
    t.match(unit, /SUCCESS/)
    // The scrape config as the container reads it, its rule file where compose mounts it from.
    const tmp = tempDir()
    t.teardown(tmp.remove)
    const config = join(tmp.dir, 'prometheus.yml')
    writeFileSync(config, read('ops/prometheus/prometheus.yml').replace('/etc/prometheus/alerts.yml', join(root, 'ops/prometheus/alerts.yml')))
    t.match(execFileSync(promtool, ['check', 'config', config], { encoding: 'utf8' }), /SUCCESS/)
  })
}
