// The consent screen, rendered on the server: who is asking, for what, where the browser goes
// next, and who approves: the person signed in to the dashboard (its session), or, for accounts
// without a dashboard sign-in, the account's API key as a fallback. No script.
import type { ValidAuthorization } from '../../commands/oauth.ts'
import { OAUTH_LIFETIMES } from '../../domain/oauth/tokens.ts'
import { CONSENT_ACTIONS, TOOL_COSTS, type ToolName } from '../../domain/mcp/tools.ts'

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

// What an approved client may do, with the prices of the spec's table, so the page cannot understate it.
const actions = Object.entries(CONSENT_ACTIONS) as [ToolName, string][]
const SPENDING = actions.flatMap(([tool, what]) => {
  const price = TOOL_COSTS[tool].price
  return price ? [`${what} (${price.credits} credits per ${price.per})`] : []
})
const EDITING = actions.filter(([tool]) => !TOOL_COSTS[tool].price).map(([, what]) => what)

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}' +
  'h1{font-size:1.4rem}ul{padding-left:1.2rem}.box{border:1px solid #ddd;border-radius:8px;padding:1rem 1.25rem}' +
  'label{display:block;margin:1rem 0 .3rem;font-weight:600}input[type=password]{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}' +
  'button{font:inherit;padding:.5rem 1.2rem;margin:1rem .5rem 0 0;border-radius:6px;border:1px solid #888;background:#fff;cursor:pointer}' +
  'button.ok{background:#0b57d0;border-color:#0b57d0;color:#fff}.err{color:#b3261e;font-weight:600}.small{color:#555;font-size:.9rem}' +
  'a.signin{font-weight:600;color:#0b57d0}summary{cursor:pointer;margin-top:.5rem}:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}'

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`
}

export interface ConsentView {
  request: ValidAuthorization
  csrf: string
  /** Who is signed in (person and account), when the browser is signed in already. */
  signedInAs: string | null
  /** The dashboard's sign-in page, coming back here afterwards. */
  signInUrl: string
  error: string | null
}

export function consentPage(v: ConsentView): string {
  const r = v.request
  const name = r.client.clientName ?? 'An application'
  const target = new URL(r.redirectUri)
  const hidden: Record<string, string> = {
    response_type: 'code',
    client_id: r.client.clientId,
    ...(r.redirectUriGiven ? { redirect_uri: r.redirectUri } : {}),
    code_challenge: r.codeChallenge,
    code_challenge_method: 'S256',
    scope: r.scope,
    resource: r.resource,
    ...(r.state !== null ? { state: r.state } : {}),
    csrf: v.csrf,
  }
  const days = (s: number) => Math.round(s / 86400)
  return page(
    `Allow ${name}?`,
    `<h1>Allow <em>${esc(name)}</em> to use your notes?</h1>
<div class="box">
<p><strong>${esc(name)}</strong>${r.client.clientUri ? ` (<span>${esc(new URL(r.client.clientUri).host)}</span>)` : ''} asks to act for your account through the MCP server:</p>
<ul>
<li>search, list and read your notes, transcripts and folders;</li>
<li><strong>spend your monthly credits</strong>, without asking you each time: ${SPENDING.map(esc).join('; ')};</li>
<li><strong>change your notes and edit their transcripts</strong>: ${EDITING.map(esc).join('; ')};</li>
<li>see your plan, credits and usage.</li>
</ul>
<p class="small">Access lasts at most ${days(OAUTH_LIFETIMES.grantSeconds)} days and ends earlier if the application stays away more than ${days(OAUTH_LIFETIMES.refreshSeconds)} days. You approve this application once; after that it signs in without asking. After you choose, your browser returns to <strong>${esc(target.protocol === 'http:' || target.protocol === 'https:' ? target.host : target.protocol)}</strong>.</p>
</div>
<form method="post" action="/oauth/authorize">
${Object.entries(hidden)
  .map(([k, val]) => `<input type="hidden" name="${esc(k)}" value="${esc(val)}">`)
  .join('\n')}
${v.error ? `<p class="err">${esc(v.error)}</p>` : ''}
${
  v.signedInAs
    ? `<p>Signed in as <strong>${esc(v.signedInAs)}</strong>.</p>`
    : `<p><a class="signin" href="${esc(v.signInUrl)}">Sign in to the dashboard</a> to approve as yourself; you come back to this page.</p>
<details><summary>No dashboard sign-in? Use an API key instead</summary>
<label for="api_key">The account’s API key</label><input type="password" id="api_key" name="api_key" autocomplete="off" placeholder="nk_…">
<p class="small">The key is checked and not stored; the application never sees it.</p>
</details>`
}
<button class="ok" type="submit" name="decision" value="approve">Approve</button><button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</form>`,
  )
}

export function errorPage(message: string, code?: string): string {
  return page(
    'Authorization failed',
    `<h1>This authorization request cannot be completed</h1><p class="err">${esc(message)}</p>${code ? `<p class="small">Error: <code>${esc(code)}</code></p>` : ''}<p class="small">Go back to the application and start again.</p>`,
  )
}

/** After a Deny by someone not signed in: no automatic redirect; the way back is a link they may follow. */
export function declinedPage(r: ValidAuthorization, back: string): string {
  const name = r.client.clientName ?? 'the application'
  const target = new URL(r.redirectUri)
  const where = target.protocol === 'http:' || target.protocol === 'https:' ? target.host : target.protocol
  return page(
    'Access declined',
    `<h1>You declined</h1><p>Nothing was shared with <strong>${esc(name)}</strong>. You can close this page.</p><p class="small">To tell the application, <a href="${esc(back)}">return to ${esc(where)}</a>.</p>`,
  )
}
