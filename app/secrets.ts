// Signing keys a deployment shares between its processes: taken from the environment, or
// generated once into the data directory (mode 0600) and read from there by every later start.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export function signingSecret(dataDir: string, name: string, fromEnv: string | null): string {
  if (fromEnv) return fromEnv
  const file = join(dataDir, `${name}-signing.key`)
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true })
    try {
      writeFileSync(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 })
    } catch (err) {
      // Another process wrote it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
  return readFileSync(file, 'utf8').trim()
}
