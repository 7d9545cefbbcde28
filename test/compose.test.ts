// docker-compose.yml as docker-compose itself reads it (`docker-compose config`, the Debian
// package scripts/system-deps.sh installs; nothing is started), checked for what a stack needs to
// restart cleanly: healthchecks and start-up order, restart policies, a volume for every store,
// Kafka reachable from the network and the host, one image, no demo seeding, credentials from
// the env file and no unauthenticated store published on the host; the image (Dockerfile) has
// what transcription needs and CI's Node major; the API scales behind the load balancer, whose
// HAProxy configuration is checked and run (haproxy from the Debian archive); every role has a
// health check and no role shares a volume with another.
import t from 'tap'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { freePort } from './support/ports.ts'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tempDir } from './support/tmp.ts'
import { pollUntil } from './support/pollUntil.ts'

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

t.test("the image: CI's Node major, production dependencies only, unprivileged", async (t) => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  // The suite runs on CI's Node: the image must run the same major.
  const nodeImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1] ?? ''
  t.match(nodeImage, new RegExp(`^node:${process.versions.node.split('.')[0]}-`), `the image's Node (${nodeImage}) is the major this suite runs on (${process.version})`)
  const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!)
  t.ok(froms.every((f) => f === '${NODE_IMAGE}' || /^[a-z]+$/.test(f)), `every stage starts from NODE_IMAGE or another stage (${froms.join(', ')})`)
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  t.match(runtime, /npm install --omit=dev/, 'runtime stage omits dev dependencies')
  t.match(runtime, /^USER node$/m, 'runs as an unprivileged user')
  // What the runtime copies from the build must not bring the dev dependencies back.
  for (const [, stage] of runtime.matchAll(/^COPY --from=(\w+) \/app /gm)) {
    const body = dockerfile.slice(dockerfile.indexOf(`AS ${stage}\n`))
    t.match(body.slice(0, body.indexOf('\nFROM ') >>> 0), /rm -rf node_modules/, `stage ${stage} drops the build's node_modules before the runtime copies it`)
  }
})

t.test('the image has what transcription needs: Python with pip, the model layer, yt-dlp', async (t) => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  const base = /^FROM (\S+)/.exec(runtime.trim())![1]!
  const baseStage = dockerfile.slice(dockerfile.indexOf(`AS ${base}\n`))
  t.match(baseStage.slice(0, baseStage.indexOf('\nFROM ')), /apt-get install[^\n]*python3 python3-pip/, `the runtime's base (${base}) installs Python 3 and pip`)
  t.match(dockerfile, /^RUN npm run --silent image-models$/m, 'the model layer is fetched at build time (scripts/imageModels.ts)')
  t.ok(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts['image-models'], 'npm run image-models exists')
  t.match(runtime, /^COPY --from=models --chown=node:node \/opt\/notes \/opt\/notes$/m, 'and copied into the runtime')
  const env = Object.fromEntries([...runtime.matchAll(/^\s*(?:ENV )?([A-Z_]+)=(\S+?)(?: \\)?$/gm)].map((m) => [m[1]!, m[2]!]))
  t.equal(env.MODELS_DIR, '/opt/notes/models')
  t.equal(env.MEDIA_TOOLS_DIR, '/opt/notes/media-tools')
  t.equal(env.YTDLP_PATH, '/opt/notes/yt-dlp/bin/yt-dlp', 'yt-dlp where its venv is')
  t.match(dockerfile, /python3 -m venv \/opt\/notes\/yt-dlp/)
})

t.test('the API scales behind the load balancer; every role has a health check; no volume shared by roles', async (t) => {
  t.same(c.services.api!.ports ?? [], [], 'api publishes no host port (so --scale api=N can start several)')
  const lb = c.services.lb!
  const published = (lb.ports ?? []).map((p) => (typeof p === 'string' ? p : `${p.published}:${p.target}`))
  t.ok(published.some((p) => p.endsWith('3000:3000')) && published.some((p) => p.endsWith('3001:3001')), `lb publishes REST and MCP (${published.join(', ')})`)
  const cfg = readFileSync(join(root, 'deploy/haproxy.cfg'), 'utf8')
  t.match(cfg, /server-template \w+ \d+ api:3000 resolvers docker/, 'lb finds every api replica by name through Docker DNS')
  t.match(cfg, /server-template \w+ \d+ api:3001 resolvers docker/, 'MCP too')
  t.notMatch(cfg, /retry-on[^\n]*(empty-response|response-timeout|5\d\d)/, 'a request that reached a replica is never sent to another')
  for (const p of PROCESSES) {
    const s = c.services[p]!
    const test = JSON.stringify(s.healthcheck?.test ?? '')
    t.match(test, /HEALTH_PORT/, `${p} is checked on its HEALTH_PORT`)
    t.match(test, /\/readyz/, `${p} is healthy when ready`)
    t.match(s.environment?.HEALTH_PORT, /^\d+$/, `${p} sets HEALTH_PORT`)
    t.notOk(volumesOf(s).some((v) => v.type === 'volume'), `${p} mounts no named volume: keys and secrets are in the stores`)
  }
  t.notOk('service-data' in c.volumes, 'no volume for keys.db and signing secrets')
})

t.test('the MCP listener is named by its public URL, from the env file', async (t) => {
  const env = readFileSync(join(root, '.env.example'), 'utf8')
  const url = /^MCP_PUBLIC_URL=(\S+)$/m.exec(env)?.[1]
  t.ok(url, 'MCP_PUBLIC_URL in .env.example')
  for (const p of PROCESSES) t.equal(c.services[p]!.environment?.MCP_PUBLIC_URL, url, `${p} gets it`)
  t.equal(c.services.api!.environment?.TRUST_PROXY, '1', 'one proxy hop: lb')
})

t.test('the load balancer: a valid HAProxy configuration, its health answer, and the spec error when no replica is up', async (t) => {
  // HAProxy of the Debian archive (scripts/system-deps.sh), the image's version line (2.6).
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const port = await freePort()
  const cfg = readFileSync(join(root, 'deploy/haproxy.cfg'), 'utf8')
    .replace('/usr/local/etc/haproxy/errors/503.http', join(root, 'deploy/errors/503.http'))
    .replace(/^\s*bind :3000$/m, `  bind 127.0.0.1:${port}`)
    .replace(/^\s*bind :3001$/m, `  bind 127.0.0.1:${await freePort()}`)
  const file = join(tmp.dir, 'haproxy.cfg')
  writeFileSync(file, cfg)
  t.match(execFileSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' }), /valid/, 'haproxy -c accepts it')
  const lb = spawn('haproxy', ['-db', '-f', file], { stdio: 'ignore' })
  t.teardown(() => void lb.kill('SIGKILL'))
  // The compose healthcheck of lb, as compose runs it, on this port.
  const check = (c.services.lb!.healthcheck!.test as string[]).slice(1)
  const probe = () => spawnSync(check[0]!, [...check.slice(1, -1), check.at(-1)!.replace('/3000', `/${port}`)]).status === 0
  await pollUntil('lb answers its health check', probe, 10_000)
  const r = await fetch(`http://127.0.0.1:${port}/v1/notes`)
  t.equal(r.status, 503)
  t.match(await r.json(), { error: 'service_unavailable', message: /API process/ }, 'the spec error body, not an HTML page')
})
