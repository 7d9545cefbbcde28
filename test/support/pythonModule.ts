// A speech worker's own Python functions, called from a test: the worker module imported as `w`
// (numpy as `np`) with its runtime on the path, and what the test's code prints last, as JSON.
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ADAPTERS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'adapters')

/** Runs `body` after `import <module> as w` from adapters/<folder>, with `runtime` as PYTHONPATH. */
export function runWorkerPython(folder: string, module: string, runtime: string, body: string): unknown {
  const script = `import sys, json\nsys.path.insert(0, ${JSON.stringify(join(ADAPTERS, folder))})\nimport numpy as np\nimport ${module} as w\n${body}`
  const out = execFileSync(process.env.ASR_PYTHON || 'python3', ['-s', '-c', script], { env: { ...process.env, PYTHONPATH: runtime, PYTHONNOUSERSITE: '1' } })
  return JSON.parse(out.toString().trim().split('\n').at(-1)!)
}
