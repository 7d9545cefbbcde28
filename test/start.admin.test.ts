// The README's first command and the admin command, as a user runs them: `npm start` on a fresh
// data directory seeds a demo pro account and prints a key that works and the demo person's
// dashboard sign-in; the admin command prints one JSON line with a working key, and sets up
// people who sign in to the dashboard.
import t from 'tap'
import { speakerModel } from './support/speech.ts'
import { join } from 'node:path'
import { spawn, execFile } from 'node:child_process'
import { freePort } from './support/ports.ts'
import { tempDir } from './support/tmp.ts'
import { embeddedEnv } from './support/embeddedEnv.ts'


async function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { env: { ...embeddedEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  // Generous: start loads the speaker model and seeds the demo, on a machine other work may saturate.
  const deadline = Date.now() + 120_000
  while (!/dashboard sign-in: \S+ \/ \S+|key is not on file/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    out: () => out,
    stop: () => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM')))),
  }
}

const admin = (env: Record<string, string>, ...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], { env: { ...embeddedEnv(), ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  )

/** The dashboard's sign-in as a browser does it: the form's CSRF token first, then the credentials. */
async function signIn(port: number, email: string, password: string) {
  const base = `http://127.0.0.1:${port}/app/api/session`
  const first = await fetch(base)
  const cookie = first.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  const { csrfToken } = await first.json()
  return fetch(base, { method: 'POST', headers: { cookie, 'x-csrf-token': csrfToken, 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })
}

t.test('npm start seeds a demo account once and prints a key that works', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const port = await freePort()
  // The models directory is the test cache, where the speaker model already is: start finds it
  // on its default path instead of fetching it again.
  speakerModel()
  const env = { DATA_DIR: tmp.dir, PORT: String(port), LOG_LEVEL: 'warn', MODELS_DIR: join(process.cwd(), '.ci', 'models') }
  const first = await start(env)
  const out = first.out()
  t.match(out, new RegExp(`listening on http://127\\.0\\.0\\.1:${port}`))
  const key = /nk_[A-Za-z0-9_-]+/.exec(out)?.[0]
  t.ok(key, 'a key is printed')
  t.match(out, /curl -s -H "Authorization: Bearer nk_/)
  const list = await fetch(`http://127.0.0.1:${port}/v1/notes`, { headers: { authorization: `Bearer ${key}` } })
  t.equal(list.status, 200)

  await t.test('the admin command prints one JSON line whose key works (and is refused below pro)', async (t) => {
    const r = await admin(env, 'create-account', '--plan', 'free', '--json')
    t.equal(r.code, 0, r.stderr)
    const lines = r.stdout.trim().split('\n')
    t.equal(lines.length, 1)
    const created = JSON.parse(lines[0]!)
    t.same(Object.keys(created), ['accountId', 'apiKey'])
    const res = await fetch(`http://127.0.0.1:${port}/v1/notes`, { headers: { authorization: `Bearer ${created.apiKey}` } })
    t.equal(res.status, 403, 'the running service knows the new key at once')
    t.match(await res.json(), { error: 'tier_upgrade_required', currentTier: 'free', requiredTier: 'pro' })
    t.equal((await admin(env, 'change-plan', '--account', created.accountId, '--plan', 'pro')).code, 0)
    await new Promise((r) => setTimeout(r, 1100))
    t.equal((await fetch(`http://127.0.0.1:${port}/v1/notes`, { headers: { authorization: `Bearer ${created.apiKey}` } })).status, 200, 'the plan change shows within a second')
    const bad = await admin(env, 'create-account', '--plan', 'gold', '--json')
    t.equal(bad.code, 2)
    t.match(bad.stderr, /--plan must be one of free, personal, pro, power, team/)
  })

  await t.test('the demo person signs in to the dashboard, which is served at /app', async (t) => {
    const [, email, password] = /dashboard sign-in: (\S+) \/ (\S+)/.exec(out)!
    t.equal(email, 'demo@example.com')
    t.equal((await signIn(port, email!, password!)).status, 201)
    const page = await fetch(`http://127.0.0.1:${port}/app/`)
    t.equal(page.status, 200, 'npm start built the front end')
    t.match(await page.text(), /<script type="module" crossorigin src="\/app\/assets\//)
  })

  await t.test('the admin command sets up people who sign in to the dashboard', async (t) => {
    const r = await admin(env, 'create-account', '--plan', 'power', '--name', 'Acme', '--email', 'Boss@Acme.example', '--password', 'a long enough password', '--json')
    t.equal(r.code, 0, r.stderr)
    const created = JSON.parse(r.stdout)
    t.same(Object.keys(created), ['accountId', 'apiKey', 'email'], 'a password given is not printed back')
    t.equal(created.email, 'boss@acme.example')
    t.equal((await signIn(port, 'boss@acme.example', 'a long enough password')).status, 201)
    const dup = await admin(env, 'create-account', '--plan', 'pro', '--email', 'boss@acme.example', '--password', 'another long password')
    t.equal(dup.code, 1)
    t.match(dup.stderr, /already registered/)
    const added = await admin(env, 'add-person', '--account', created.accountId, '--email', 'ops@acme.example', '--json')
    t.equal(added.code, 0, added.stderr)
    const generated = JSON.parse(added.stdout).password as string
    t.match(generated, /^[A-Za-z0-9_-]{16}$/, 'no password given: one is generated and shown once')
    t.equal((await signIn(port, 'ops@acme.example', generated)).status, 201)
    const reset = await admin(env, 'set-password', '--email', 'ops@acme.example', '--password', 'the new password 42')
    t.equal(reset.code, 0, reset.stderr)
    t.equal((await signIn(port, 'ops@acme.example', generated)).status, 401, 'the old password is gone')
    t.equal((await signIn(port, 'ops@acme.example', 'the new password 42')).status, 201)
    t.equal((await admin(env, 'add-person', '--account', created.accountId, '--email', 'x@acme.example', '--password', 'short')).code, 1, 'too short a password')
  })

  await first.stop()
  const second = await start(env)
  t.teardown(second.stop)
  t.match(second.out(), key!, 'a restart prints the same demo key')
  t.equal((await fetch(`http://127.0.0.1:${port}/v1/notes`, { headers: { authorization: `Bearer ${key}` } })).status, 200, 'data survived the restart')
})
