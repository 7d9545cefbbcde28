// The README's quick start, run as a reader runs it: `npm start` on the embedded default (a
// fresh DATA_DIR, a free port), then the commands of "A first curl" as they are written, with B and
// K set to the base URL and the key that `npm start` printed. Each must answer what the README
// says it answers. A change to the README's commands that breaks them fails here.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawn, execFile } from 'node:child_process'
import { freePort } from './support/ports.ts'
import { tempDir } from './support/tmp.ts'
import { embeddedEnv } from './support/embeddedEnv.ts'
import { speakerModel } from './support/speech.ts'
import { pollUntil } from './support/pollUntil.ts'

/** The shell blocks under a README heading, each as its lines. */
function shellBlocks(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`README has no "## ${heading}"`)
  const end = markdown.indexOf('\n## ', start + 1)
  const section = markdown.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim().split('\n'))
}

const run = (command: string, env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile('bash', ['-c', command], { env, timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
  )

t.test('given a fresh clone, when the README quick start is followed, then npm start prints a base URL and key with which each first curl answers as described', async (t) => {
  const readme = readFileSync('README.md', 'utf8')
  const [setup] = shellBlocks(readme, 'Quick start')
  t.match(setup?.[0], /^npm install && npm start\s+#/, 'the first command installs and starts')
  t.match(setup?.[1], /^npm test\s+#/, 'the second runs every test')

  const tmp = tempDir()
  t.teardown(tmp.remove)
  const port = await freePort()
  const mcpPort = await freePort() // PORT+1, npm start's default, may be taken on a busy machine
  speakerModel() // already in the test cache: start finds it there instead of fetching it
  // `npm start` itself, in a process group of its own so that stopping it stops what npm started.
  const child = spawn('npm', ['start'], {
    env: { ...embeddedEnv(), DATA_DIR: tmp.dir, PORT: String(port), MCP_PORT: String(mcpPort), LOG_LEVEL: 'warn', MODELS_DIR: join(process.cwd(), '.ci', 'models') },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  t.teardown(async () => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM')
    await exited
  })
  await pollUntil(`npm start printing the demo key (output so far:\n${out})`, () => child.exitCode !== null ? Promise.reject(new Error(`npm start exited:\n${out}`)) : /dashboard sign-in: \S+/.test(out), 180_000)
  const base = /listening on (http:\/\/\S+)/.exec(out)?.[1]
  const key = /\bnk_[A-Za-z0-9_-]+/.exec(out)?.[0]
  t.equal(base, `http://127.0.0.1:${port}`, 'the base URL')
  t.ok(key, 'the demo key')

  const [curls] = shellBlocks(readme, 'A first curl')
  t.match(curls?.[0], /^export B=http:\/\/127\.0\.0\.1:3000 K=nk_\.\.\./, 'the block starts by naming the base URL and the key')
  const commands = curls!.slice(1).filter((l) => l.startsWith('curl '))
  t.ok(commands.length >= 3, 'a few first requests')
  const env = { ...process.env, B: base, K: key }
  const expectations: Array<[RegExp, (body: any) => void]> = [
    [/\/v1\/account\/status/, (b) => t.match(b, { plan: 'pro', restApi: { available: true }, credits: { monthly: 5000, left: Number } }, 'account status: the plan and its credits')],
    [/-X POST \$B\/v1\/folders/, (b) => t.match(b, { id: String, name: 'Work' }, 'a folder is made')],
    [/\/v1\/notes\?limit=5/, (b) => t.match(b, { notes: Array, hasMore: Boolean }, 'the notes list')],
    [/\/mcp\/info/, (b) => t.ok(Array.isArray(b.tools) && b.tools.some((tool: { name: string }) => tool.name === 'search_notes'), 'the MCP server lists its tools')],
  ]
  for (const command of commands) {
    const r = await run(command.replace(/\s+#.*$/, ''), env)
    t.equal(r.code, 0, `${command}: exits 0 ${r.stderr}`)
    let body: any
    t.doesNotThrow(() => (body = JSON.parse(r.stdout)), `${command}: answers JSON`)
    t.notOk(body?.error, `${command}: no error (${r.stdout.slice(0, 200)})`)
    const expectation = expectations.find(([pattern]) => pattern.test(command))
    t.ok(expectation, `${command}: the test knows what it should answer`)
    expectation?.[1](body)
  }
})
