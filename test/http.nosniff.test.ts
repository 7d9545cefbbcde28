// X-Content-Type-Options: nosniff on every answer of the REST and MCP servers (issue 26, item 6):
// success, errors, exports, the contract, unknown paths, and the MCP server's own routes.
import t from 'tap'
import { mcpTestService } from './support/mcp.ts'
import { readyNote, transcriptOf } from './support/transcripts.ts'

const s = await mcpTestService()
t.teardown(s.close)

t.test('every REST and MCP answer says nosniff', async (t) => {
  const a = await s.account('pro')
  const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf([['A', 0, 1000, '<b>Hello</b> there.']]) })
  const rest = [
    { url: '/v1/notes', headers: a.headers },
    { url: `/v1/notes/${noteId}/transcript?format=md`, headers: a.headers },
    { url: `/v1/notes/${noteId}/transcript?format=txt`, headers: a.headers },
    { url: '/v1/notes', headers: {} },
    { url: '/v1/notes/not-a-note', headers: a.headers },
    { url: '/v1/openapi.json', headers: {} },
    { url: '/no/such/path', headers: {} },
  ]
  for (const r of rest) {
    const res = await s.inject({ method: 'GET', url: r.url, headers: r.headers })
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${r.url} → ${res.statusCode}`)
  }
  const bad = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: '{not json' })
  t.equal(bad.headers['x-content-type-options'], 'nosniff', `malformed JSON → ${bad.statusCode}`)
  for (const path of ['/info', '/mcp', '/no/such/path']) {
    const res = await s.mcpApp.inject({ method: 'GET', url: path })
    t.equal(res.headers['x-content-type-options'], 'nosniff', `MCP ${path} → ${res.statusCode}`)
  }
})
