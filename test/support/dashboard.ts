// A signed-in dashboard client over `inject`: keeps cookies like a browser, fetches the CSRF
// token from GET /app/api/session, and sends it on every change.
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import type { TestService } from './service.ts'
import type { Plan } from '../../domain/credits/plans.ts'

export const PASSWORD = 'correct horse battery staple'

export class DashboardClient {
  readonly cookies = new Map<string, string>()
  csrf = ''
  constructor(private readonly s: TestService) {}

  cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  keep(r: LightMyRequestResponse) {
    for (const c of [r.headers['set-cookie'] ?? []].flat()) {
      const [pair] = String(c).split(';')
      const i = pair!.indexOf('=')
      const name = pair!.slice(0, i)
      const value = pair!.slice(i + 1)
      if (/Max-Age=0/.test(String(c)) || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return r
  }

  async request(method: InjectOptions['method'], url: string, o: { body?: unknown; headers?: Record<string, string>; csrf?: boolean } = {}) {
    const headers: Record<string, string> = { cookie: this.cookieHeader(), ...(o.csrf !== false && method !== 'GET' ? { 'x-csrf-token': this.csrf } : {}), ...o.headers }
    if (o.body !== undefined) headers['content-type'] = 'application/json'
    return this.keep(await this.s.inject({ method, url, headers, ...(o.body !== undefined ? { payload: JSON.stringify(o.body) } : {}) }))
  }

  async session() {
    const r = await this.request('GET', '/app/api/session')
    this.csrf = r.json().csrfToken
    return r.json()
  }

  async signIn(email: string, password = PASSWORD) {
    await this.session()
    const r = await this.request('POST', '/app/api/session', { body: { email, password } })
    if (r.statusCode === 201) this.csrf = r.json().csrfToken
    return r
  }
}

/** An account with one API key and one person who signs in to the dashboard. */
export async function accountWithPerson(s: TestService, plan: Plan = 'pro', email = `p-${Math.random().toString(36).slice(2, 10)}@example.com`) {
  const a = await s.account(plan)
  await s.services.persons.register({ accountId: a.accountId, email, password: PASSWORD, name: 'Pat Example' })
  return { ...a, email }
}

export async function signedIn(s: TestService, plan: Plan = 'pro') {
  const a = await accountWithPerson(s, plan)
  const d = new DashboardClient(s)
  const r = await d.signIn(a.email)
  if (r.statusCode !== 201) throw new Error(`sign-in answered ${r.statusCode}: ${r.body}`)
  return { ...a, d, signIn: r }
}
