// The GE2E speaker-encoder weights from the one registry that carries them: `pretrained.pt`
// (17 MB, Apache-2.0) inside the Resemblyzer wheel on PyPI. Fetched with pip (no other network),
// checked against a pinned SHA-256, written atomically. `npm start` calls it for the default
// model path; the test runner for its cache.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

export const SPEAKER_MODEL_FILE = 'resemblyzer-0.1.4-pretrained.pt'
const PACKAGE = 'resemblyzer==0.1.4'
const SHA256 = '39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e'
/** What fetches it by hand, for messages. */
export const SPEAKER_MODEL_COMMAND = `python3 -m pip download --no-deps --only-binary=:all: ${PACKAGE}  (then unzip resemblyzer/pretrained.pt)`

/** Makes sure the weights are at `path`; returns the path. Throws with the reason when they cannot be had. */
export function fetchSpeakerModel(path: string): string {
  if (existsSync(path)) return path
  const work = mkdtempSync(join(tmpdir(), 'speaker-model-'))
  try {
    execFileSync('python3', ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--no-deps', '--only-binary=:all:', '-d', work, PACKAGE], { stdio: ['ignore', 'ignore', 'pipe'] })
    const wheel = readdirSync(work).find((f) => f.endsWith('.whl'))
    if (!wheel) throw new Error('pip downloaded no wheel')
    execFileSync('python3', ['-m', 'zipfile', '-e', join(work, wheel), join(work, 'x')])
    const bytes = readFileSync(join(work, 'x', 'resemblyzer', 'pretrained.pt'))
    const sha = createHash('sha256').update(bytes).digest('hex')
    if (sha !== SHA256) throw new Error(`the downloaded weights have SHA-256 ${sha}, expected ${SHA256}`)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(`${path}.part`, bytes)
    renameSync(`${path}.part`, path)
    return path
  } catch (err) {
    const e = err as Error & { stderr?: Buffer }
    throw new Error(`${e.message.split('\n')[0]}${e.stderr?.length ? `: ${e.stderr.toString().trim().split('\n').pop()}` : ''}`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

if (process.argv[1] && process.argv[1] === new URL(import.meta.url).pathname) {
  console.log(fetchSpeakerModel(process.argv[2] ?? join('.ci', 'models', SPEAKER_MODEL_FILE)))
}
