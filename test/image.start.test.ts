// The image's start command with the image's environment, on this machine (no Docker engine
// here): the Dockerfile's runtime ENV and CMD, the compose stack's environment of each role, and
// the model layer where the image puts it. Paths inside the image map to their places here (the
// model layer `npm run image-models` builds: .ci/models and .media-tools, which `npm test` fills
// the same way), and the compose hosts to the test servers: EventStoreDB (the protocol-level test
// server) and MongoDB (FerretDB; MONGO_URL). What stays unchecked is the image itself: its Debian
// packages, its Python, its file owners (docs/container-image.md).
// MONGO_URL unset: nothing to run here; say so and pass.
import t from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { tempDir } from './support/tmp.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { pollUntil } from './support/pollUntil.ts'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const mongoUrl = process.env.MONGO_URL

/** The runtime stage's ENV (ARG defaults filled in) and CMD. */
function runtimeOfDockerfile(): { env: Record<string, string>; cmd: string[] } {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ')
  const runtime = text.slice(text.lastIndexOf('\nFROM '))
  const args = Object.fromEntries([...runtime.matchAll(/^ARG (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]))
  const env: Record<string, string> = {}
  for (const [, line] of runtime.matchAll(/^ENV (.+)$/gm)) {
    for (const [, k, v] of line!.matchAll(/(\w+)=(\S+)/g)) env[k!] = v!.replace(/\$\{(\w+)\}/g, (_, a: string) => args[a] ?? '')
  }
  const cmd = JSON.parse(/^CMD (\[.+\])$/m.exec(runtime)![1]!) as string[]
  return { env, cmd }
}

/** The compose environment of `service`, as docker-compose reads it with .env.example. */
function composeEnv(service: string): Record<string, string> {
  const yaml = execFileSync('docker-compose', ['-f', join(root, 'docker-compose.yml'), '--project-directory', root, '--env-file', join(root, '.env.example'), 'config'], { cwd: root, encoding: 'utf8' })
  const json = execFileSync('python3', ['-c', 'import sys, yaml, json; print(json.dumps(yaml.safe_load(sys.stdin)))'], { input: yaml, encoding: 'utf8' })
  return (JSON.parse(json) as { services: Record<string, { environment: Record<string, string> }> }).services[service]!.environment
}

if (!mongoUrl) {
  t.comment('MONGO_URL is not set: the image start test runs on MongoDB (npm test starts FerretDB)')
} else {
  t.test("given the image's env and the workers role, when its start command runs, then the speech engine and the diarizer are ready from the model layer, with nothing fetched", async (t) => {
    const image = runtimeOfDockerfile()
    // Where the image's paths are on this machine.
    const here: Record<string, string> = {
      '/opt/notes/models': resolve(process.env.MODELS_DIR || join(root, '.ci', 'models')),
      '/opt/notes/media-tools': resolve(process.env.MEDIA_TOOLS_DIR || join(root, '.media-tools')),
      '/opt/notes/yt-dlp/bin/yt-dlp': execFileSync('sh', ['-c', 'command -v yt-dlp'], { encoding: 'utf8' }).trim(),
    }
    const data = tempDir()
    const esdb = await startEsdbTestServer()
    const db = `test_image_${randomUUID().replace(/-/g, '').slice(0, 10)}`
    t.teardown(async () => {
      await esdb.stop()
      const { dropMongoDatabase } = await import('../adapters/mongodb/documentStore.ts')
      await dropMongoDatabase(mongoUrl, db)
      await dropMongoDatabase(mongoUrl, `${db}_keys`)
      data.remove()
    })
    const compose = composeEnv('workers')
    const env: Record<string, string> = { PATH: process.env.PATH!, HOME: data.dir, ...image.env, ...compose }
    for (const [k, v] of Object.entries(env)) if (here[v]) env[k] = here[v]!
    t.equal(env.ROLES, 'workers')
    // The compose hosts, here.
    Object.assign(env, { DATA_DIR: data.dir, ESDB_URL: esdb.connectionString, MONGO_URL: mongoUrl, MONGO_DB: db, KEYS_MONGO_DB: `${db}_keys` })
    for (const k of Object.keys(env)) if (k.startsWith('S3_')) delete env[k]
    const child = spawn(image.cmd[0]!, image.cmd.slice(1), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const lines: string[] = []
    for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (l) => lines.push(l))
    t.teardown(
      () =>
        new Promise<void>((done) => {
          if (child.exitCode !== null) return done()
          child.once('exit', () => done())
          child.kill('SIGTERM')
          setTimeout(() => child.kill('SIGKILL'), 15_000).unref()
        }),
    )
    const log = () => lines.join('\n')
    await pollUntil('the speech engine and the diarizer report', () => /speech: +faster-whisper \d/.test(log()) && /speakers: +speakers and speech activity: \S.*(onnxruntime|not available)/.test(log()) || child.exitCode !== null, 120_000, 200)
    t.equal(child.exitCode, null, 'the process runs')
    t.match(log(), /speech: +faster-whisper [\d.]+ on CTranslate2 [\d.]+, .*model whisper-base/, 'the default speech engine is ready, on the model the image bakes')
    t.match(log(), /speakers: +speakers and speech activity: .*on onnxruntime/, 'the diarizer is ready')
    t.match(log(), /media: +ffmpeg \S+, ffprobe \S+/, 'ffmpeg and ffprobe are there')
    t.notMatch(log(), /fetching|installing|pip:/, 'nothing is downloaded at start: the model layer has it all')
    t.notMatch(log(), /WARNING/, `no warning (${lines.filter((l) => l.includes('WARNING')).join(' | ')})`)
  })
}
