// An API replica (test/support/apiReplica.ts) in a child process of its own, as the scale layout
// runs several: started with its environment, stopped with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const replicaScript = fileURLToPath(new URL('./apiReplica.ts', import.meta.url))

export type Replica = { child: ChildProcess; port: number; mcpPort: number; apiKey?: string }

export function startReplica(env: Record<string, string>): Promise<Replica> {
  const child = spawn(process.execPath, ['--import', 'tsx', replicaScript], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    // Other lines (a log line or two) pass by; the replica's answer is the one JSON line with a port.
    lines.on('line', (line) => {
      if (line.startsWith('{"port"')) resolve({ child, ...(JSON.parse(line) as Omit<Replica, 'child'>) })
    })
    child.once('exit', (code) => reject(new Error(`replica exited with ${code}`)))
  })
}

export const stopReplica = (r: Replica) =>
  new Promise<void>((resolve) => {
    if (r.child.exitCode !== null) return resolve()
    r.child.once('exit', () => resolve())
    r.child.kill('SIGTERM')
    // One that cannot close (a store gone) must not hold the run.
    setTimeout(() => r.child.kill('SIGKILL'), 15_000).unref()
  })
