// docs/configuration.md is generated from app/config.ts (scripts/configDocs.ts, `npm run
// docs:config`), so the reference cannot drift from what the service reads: the committed page
// must be what the generator writes now, and every variable the configuration reads at run time
// must be on it.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { loadConfig } from '../app/config.ts'
import { CONFIG_DOC, configVariables, renderConfigDoc } from '../scripts/configDocs.ts'

const variables = configVariables()
const byName = new Map(variables.map((v) => [v.name, v]))

/** The variables loadConfig asks the environment for, given these set. */
function readsOf(set: Record<string, string>): Set<string> {
  const seen = new Set<string>()
  const env = new Proxy(set, {
    get(target, key) {
      if (typeof key === 'string') seen.add(key)
      return target[key as string]
    },
  })
  loadConfig(env)
  return seen
}

t.test('given the source, when the page is generated, then it is the committed docs/configuration.md (run `npm run docs:config` after changing app/config.ts)', async (t) => {
  t.equal(readFileSync(CONFIG_DOC, 'utf8'), renderConfigDoc(variables))
})

t.test('given the configuration run with each kind of deployment, then every variable it reads is documented', async (t) => {
  const deployments: Record<string, Record<string, string>> = {
    'the embedded default': {},
    'a remote speech engine': { ASR_BASE_URL: 'http://127.0.0.1:9/v1' },
    'whisper.cpp': { WHISPER_MODEL_PATH: '/models/ggml-tiny.en.bin' },
    'S3 blobs': { S3_BUCKET: 'notes', S3_ENDPOINT: 'http://127.0.0.1:9000' },
    'a remote language engine': { LLM_BASE_URL: 'http://127.0.0.1:9/v1' },
    'a cap on downloads': { IMPORT_MAX_BYTES: '1000' },
  }
  for (const [name, env] of Object.entries(deployments)) {
    const missing = [...readsOf(env)].filter((v) => !byName.has(v))
    t.same(missing, [], `${name}: every variable read is on the page`)
  }
})

t.test('given the loaders, then defaults and meanings come from the source as written', async (t) => {
  t.match(byName.get('PORT'), { default: '3000', setting: 'port', meaning: /^Where the REST API/ })
  t.match(byName.get('JOB_LEASE_MS'), { default: '300000', setting: 'pipeline.jobs.leaseMs' }, 'arithmetic worked out (5 * 60_000)')
  t.match(byName.get('TRANSLATION_ENGINE'), { default: 'auto', meaning: /Apertium/ }, 'the default after the allowed values')
  t.match(byName.get('WEBHOOK_RETRY_DELAYS_SECONDS'), { meaning: /retry/ }, 'a variable read beside its property finds the comment naming it')
  t.equal(byName.get('IMPORT_MAX_BYTES')?.default, null, 'a setting that is off without its variable has no default')
  t.equal(byName.get('MCP_TRUST_PROXY')?.default, 'TRUST_PROXY', 'a fallback to another variable reads as its name')
  t.equal(byName.get('WHISPER_MODEL')?.default, 'base', 'the next alternative along an || chain')
  t.equal(loadConfig({}).port, Number(byName.get('PORT')!.default), 'the documented default is the one in use')
  t.equal(loadConfig({}).pipeline.jobs.leaseMs, Number(byName.get('JOB_LEASE_MS')!.default))
})
