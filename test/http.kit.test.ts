// The one HTTP kit (issue 12 item 2, issue 19): the project's shared plugins are
// fastify-plugins (they apply to the context that registers them, named for their
// dependencies), and the dashboard's webhook routes are the REST route definitions mounted
// under /app/api, not a copy.
import t from 'tap'
import { errorHandling } from '../api/http/errorHandling.ts'
import { restAuthentication } from '../api/http/authentication.ts'
import { countedLimits, limitPerCredential } from '../api/http/rateLimit.ts'
import { crossOrigin } from '../api/http/crossOrigin.ts'
import { loadShedding } from '../api/http/loadShedding.ts'
import { dashboardSecurityHeaders } from '../api/http/securityHeaders.ts'
import { testService } from './support/service.ts'
import { dashboardRoutes, DASHBOARD_API } from '../api/dashboard/routes.ts'
import { webhookRoutes } from '../api/routes/webhooks.ts'
import { signedIn } from './support/dashboard.ts'

t.test('the shared plugins are fastify-plugins, each with a name', async (t) => {
  const plugins = { errorHandling, restAuthentication, limitPerCredential, countedLimits, crossOrigin, loadShedding, dashboardSecurityHeaders }
  for (const [name, p] of Object.entries(plugins)) {
    const meta = p as unknown as Record<symbol, unknown>
    t.equal(meta[Symbol.for('skip-override')], true, `${name} applies to the context that registers it`)
    t.match((meta[Symbol.for('plugin-meta')] as { name?: string } | undefined)?.name, /^notes-/, `${name} is named`)
  }
})

t.test('the dashboard mounts the REST webhook route definitions under the session', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const rest = webhookRoutes(s.services)
  const dash = dashboardRoutes(s.services).filter((r) => r.path.startsWith(`${DASHBOARD_API}/webhooks`))
  t.equal(dash.length, rest.length, 'every REST webhook operation, no other')
  for (const r of rest) {
    const d = dash.find((x) => x.method === r.method && x.path === r.path.replace(/^\/v1/, DASHBOARD_API))!
    t.ok(d, `${r.method} ${r.path}`)
    t.equal(d.handle.toString(), r.handle.toString(), `${r.operationId}: the same handler`)
    t.equal(d.params, r.params, 'the same path schema')
    t.equal(d.body, r.body, 'the same body schema')
    t.equal(d.response.schema, r.response.schema, 'the same answer schema')
    t.same(d.errors, r.errors)
    t.equal(d.operationId, `dashboard${r.operationId[0]!.toUpperCase()}${r.operationId.slice(1)}`)
  }
  // And they answer under the session, with the plan rule of REST (Power only).
  const a = await signedIn(s, 'pro')
  const refused = await a.d.request('GET', `${DASHBOARD_API}/webhooks`)
  t.same([refused.statusCode, refused.json().error], [403, 'tier_upgrade_required'])
  const p = await signedIn(s, 'power')
  t.same((await p.d.request('GET', `${DASHBOARD_API}/webhooks`)).statusCode, 200)
  const bad = await p.d.request('POST', `${DASHBOARD_API}/webhooks`, { body: { url: 'not a url' } })
  t.same([bad.statusCode, bad.json().error], [400, 'invalid_request'])
  t.equal((await p.d.request('GET', `${DASHBOARD_API}/webhooks`, { headers: { cookie: '' } })).statusCode, 401, 'no session, no webhooks')
})
