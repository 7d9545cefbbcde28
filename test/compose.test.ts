// docker-compose.yml as docker-compose itself reads it (`docker-compose config`, the Debian
// package scripts/system-deps.sh installs; nothing is started), checked for what a stack needs to
// restart cleanly: healthchecks and start-up order, restart policies, a volume for every store,
// Kafka reachable from the network and the host, one image, no demo seeding, credentials from
// the env file and no unauthenticated store published on the host.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tempDir } from './support/tmp.ts'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))

type Service = {
  image?: string
  build?: unknown
  restart?: string
  healthcheck?: { test: unknown }
  depends_on?: Record<string, { condition: string }>
  environment?: Record<string, string>
  ports?: Array<string | { published: number | string; target: number; host_ip?: string }>
  volumes?: Array<string | { type: string; source: string; target: string }>
}

// docker-compose 1.x prints short forms ("esdb-data:/var/lib/eventstore:rw",
// "127.0.0.1:2113:2113/tcp"), newer versions the long ones; both read the same here.
const volumesOf = (s: Service) =>
  (s.volumes ?? []).map((v) => {
    if (typeof v !== 'string') return v
    const [source, target] = v.split(':') as [string, string]
    return { type: source.startsWith('.') || source.startsWith('/') ? 'bind' : 'volume', source, target }
  })
const hostIpsOf = (s: Service) => (s.ports ?? []).map((p) => (typeof p === 'string' ? (p.split(':').length === 3 ? p.split(':')[0]! : '') : (p.host_ip ?? '')))
type Compose = { services: Record<string, Service>; volumes: Record<string, unknown> }

function config(files: string[], envFile: string): Compose {
  const args = [...files.flatMap((f) => ['-f', join(root, f)]), '--project-directory', root, '--env-file', envFile, 'config']
  const yaml = execFileSync('docker-compose', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  // docker-compose (v1, Python) prints YAML only; its own dependency python3-yaml turns it to JSON.
  const json = execFileSync('python3', ['-c', 'import sys, yaml, json; print(json.dumps(yaml.safe_load(sys.stdin)))'], { input: yaml, encoding: 'utf8' })
  return JSON.parse(json) as Compose
}

const STORES = ['eventstore', 'mongo', 'kafka', 'minio']
const PROCESSES = ['api', 'projections', 'forwarder', 'workers']
const c = config(['docker-compose.yml'], join(root, '.env.example'))

t.test('every store has a healthcheck, a named volume and restarts unless stopped', async (t) => {
  for (const name of STORES) {
    const s = c.services[name]!
    t.ok(s.healthcheck?.test, `${name} has a healthcheck`)
    t.equal(s.restart, 'unless-stopped', `${name} restarts`)
    const named = volumesOf(s).filter((v) => v.type === 'volume' && v.source in c.volumes)
    t.ok(named.length > 0, `${name} keeps its data in a named volume`)
  }
  const kafkaData = c.services.kafka!.environment!.KAFKA_LOG_DIRS
  t.ok(volumesOf(c.services.kafka!).some((v) => v.target === kafkaData), 'Kafka log dirs are the volume')
})

t.test('the processes start after the stores are healthy, from one image, and restart', async (t) => {
  const images = new Set(PROCESSES.map((p) => c.services[p]!.image))
  t.equal(images.size, 1, 'one image for every process')
  t.equal(PROCESSES.filter((p) => c.services[p]!.build).length, 1, 'built once')
  for (const p of PROCESSES) {
    const s = c.services[p]!
    t.equal(s.restart, 'unless-stopped', `${p} restarts`)
    t.equal(s.depends_on?.eventstore?.condition, 'service_healthy', `${p} waits for EventStoreDB`)
    t.equal(s.depends_on?.mongo?.condition, 'service_healthy', `${p} waits for MongoDB`)
    t.equal(s.depends_on?.['minio-init']?.condition, 'service_completed_successfully', `${p} waits for the bucket`)
    t.equal(s.environment?.SEED_DEMO, '0', `${p} seeds no demo account`)
    t.match(s.environment?.ROLES, /\S/, `${p} names its role`)
  }
  t.equal(c.services.forwarder!.depends_on?.kafka?.condition, 'service_healthy', 'the forwarder waits for Kafka')
  t.notOk('install' in c.services, 'no install step into a bind mount')
  for (const p of PROCESSES) t.notOk(volumesOf(c.services[p]!).some((v) => v.type === 'bind'), `${p} runs the image, not the checkout`)
})

t.test('Kafka advertises a listener for the compose network and one for the host', async (t) => {
  const advertised = c.services.kafka!.environment!.KAFKA_ADVERTISED_LISTENERS!.split(',')
  t.ok(advertised.some((l) => l.endsWith('//kafka:9092')), 'kafka:9092 on the network')
  t.ok(advertised.some((l) => /\/\/localhost:\d+$/.test(l)), 'localhost for the host')
  t.equal(c.services.forwarder!.environment!.KAFKA_BROKERS, 'kafka:9092')
})

t.test('no unauthenticated store is published on the host; the override publishes on loopback only', async (t) => {
  for (const name of ['eventstore', 'mongo', 'kafka']) t.same(c.services[name]!.ports ?? [], [], `${name} not published`)
  const withHost = config(['docker-compose.yml', 'docker-compose.host.yml'], join(root, '.env.example'))
  for (const name of ['eventstore', 'mongo', 'kafka']) {
    const ips = hostIpsOf(withHost.services[name]!)
    t.ok(ips.length > 0 && ips.every((ip) => ip === '127.0.0.1'), `${name} on 127.0.0.1 only with docker-compose.host.yml`)
  }
})

t.test('store credentials come from the env file, never from the compose file', async (t) => {
  const env = Object.fromEntries(
    readFileSync(join(root, '.env.example'), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
  )
  const text = readFileSync(join(root, 'docker-compose.yml'), 'utf8')
  for (const k of ['MONGO_PASSWORD', 'MINIO_ROOT_PASSWORD']) t.notOk(text.includes(env[k]!), `${k}'s value is not in docker-compose.yml`)
  t.equal(c.services.mongo!.environment!.MONGO_INITDB_ROOT_PASSWORD, env.MONGO_PASSWORD)
  t.ok(c.services.api!.environment!.MONGO_URL!.includes(`:${env.MONGO_PASSWORD}@`), 'the service connects with them')
  t.equal(c.services.api!.environment!.S3_SECRET_ACCESS_KEY, env.MINIO_ROOT_PASSWORD)
  // Without the env file the stack refuses to start rather than fall back to a default password.
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const empty = join(tmp.dir, 'empty.env')
  writeFileSync(empty, '')
  t.throws(() => config(['docker-compose.yml'], empty), 'refused without credentials')
})

t.test('the image: Node 22 LTS, production dependencies only', async (t) => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!)
  t.ok(froms.length > 0 && froms.every((f) => /^node:22\b/.test(f)), `node:22 (${froms.join(', ')})`)
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  t.match(runtime, /npm install --omit=dev/, 'runtime stage omits dev dependencies')
  t.match(runtime, /^USER node$/m, 'runs as an unprivileged user')
})
