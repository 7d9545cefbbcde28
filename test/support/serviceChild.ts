// The whole service as a child process (test/support/serviceProcess.ts, app/server.ts's wiring),
// for suites that kill it with SIGKILL at the worst moment: resolves with its ready line (base
// URL, the demo account and key), rejects with its stderr when it exits first, and is killed by
// the test's teardown if it is still running.
import { spawn, type ChildProcess } from 'node:child_process'
import type { Test } from 'tap'

export interface ServiceReady {
  baseUrl: string
  accountId: string
  apiKey: string
}

export async function startServiceChild(t: Test, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; ready: ServiceReady }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/serviceProcess.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr!.on('data', (d) => (err += d))
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let out = ''
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d
      const l = out.split('\n').find((x) => x.startsWith('{"ready":true'))
      if (l) resolve(l)
    })
    child.once('exit', () => reject(new Error(`the service exited before it was ready: ${err.slice(-2000)}`)))
  })
  return { child, ready: JSON.parse(line) as ServiceReady }
}
