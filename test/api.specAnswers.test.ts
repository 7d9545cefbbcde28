// Answers that must follow the spec's shapes where the framework or the SDK would answer in its
// own (issue 17, item 5): a method a path does not have (405 with Allow), requests Node's HTTP
// parser refuses before fastify sees them (sent over raw sockets, as no HTTP client would send
// them), and on MCP: the SDK's own refusals (bad arguments, unknown tool) as the README's JSON
// error body, unparsable bodies as JSON-RPC -32700, and the endpoint at a path ending in /mcp.
import t from 'tap'
import { connect } from 'node:net'
import { mcpTestService, structured, toolErrorBody } from './support/mcp.ts'
import { readyNote, transcriptOf } from './support/transcripts.ts'

const s = await mcpTestService()
t.teardown(s.close)
const a = await s.account('pro')
const json = { 'content-type': 'application/json' }

/** Writes `request` as bytes on a fresh connection; resolves with everything the server sent back. */
function raw(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.end(request))
    const chunks: Buffer[] = []
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' && chunks.length > 0 ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(err)))
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')))
  })
}

function parseRaw(answer: string) {
  const [head, ...rest] = answer.split('\r\n\r\n')
  const [statusLine, ...headerLines] = head!.split('\r\n')
  const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
  return { status: Number(statusLine!.split(' ')[1]), headers, body: rest.join('\r\n\r\n') }
}

t.test('a method the path does not have: 405 with Allow and the spec body, before any key is asked for', async (t) => {
  const noteId = '00000000-0000-4000-8000-000000000000'
  const cases: [method: string, url: string, allow: string][] = [
    ['PUT', '/v1/notes', 'GET, HEAD, POST'],
    ['DELETE', `/v1/notes/${noteId}/transcript`, 'GET, HEAD'],
    ['GET', `/v1/notes/${noteId}/finalize`, 'POST'],
    ['POST', `/v1/notes/${noteId}/speakers/A`, 'PATCH'],
    ['PATCH', '/v1/voice-profiles', 'GET, HEAD'],
    ['POST', '/health', 'GET, HEAD'],
    // Paths open to browsers also answer CORS preflights (OPTIONS).
    ['PUT', '/mcp/info', 'GET, HEAD, OPTIONS'],
    ['GET', '/oauth/token', 'OPTIONS, POST'],
  ]
  for (const [method, url, allow] of cases) {
    for (const headers of [{}, a.headers]) {
      const r = await s.inject({ method: method as 'GET', url, headers })
      t.equal(r.statusCode, 405, `${method} ${url}`)
      t.equal(r.headers.allow, allow, `${method} ${url}: Allow`)
      t.match(r.json(), { error: 'method_not_allowed', message: new RegExp(`${method} is not allowed`) })
    }
  }
  // A path nothing serves stays a 404, whatever the method.
  for (const method of ['GET', 'PUT'] as const) {
    const r = await s.inject({ method, url: '/v1/nothing-here', headers: a.headers })
    t.equal(r.statusCode, 404)
    t.equal(r.json().error, 'not_found')
  }
  // Over a real connection too, and on the {mcp_url} listener.
  const viaHttp = await fetch(`${s.base}/v1/notes`, { method: 'PUT', headers: a.headers })
  t.equal(viaHttp.status, 405)
  t.equal(viaHttp.headers.get('allow'), 'GET, HEAD, POST')
  const info = await fetch(`${s.mcpUrl}/info`, { method: 'POST' })
  t.equal(info.status, 405)
  t.equal(info.headers.get('allow'), 'GET, HEAD, OPTIONS')
  t.match(await info.json(), { error: 'method_not_allowed' })
})

t.test("requests Node's HTTP parser refuses: the spec body with a snake_case code, on both listeners", async (t) => {
  const cases: [what: string, request: string, status: number, code: string][] = [
    ['a header value with a control byte', 'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n', 400, 'invalid_request'],
    ['a header name with a space', 'GET /health HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n', 400, 'invalid_request'],
    ['two Content-Lengths', 'POST /v1/notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 400, 'invalid_request'],
    ['Content-Length with Transfer-Encoding', 'POST /v1/notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'invalid_request'],
    ['an unknown transfer coding', 'POST /v1/notes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked, x\r\n\r\n', 400, 'invalid_request'],
    ['a broken request line', 'GET /health HTTP/9\r\n\r\n', 400, 'invalid_request'],
    ['headers over the size limit', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
  ]
  for (const url of [s.base, s.mcpUrl]) {
    for (const [what, request, status, code] of cases) {
      const r = parseRaw(await raw(url, request))
      t.equal(r.status, status, `${what} (${url})`)
      t.match(r.headers['content-type'], /^application\/json/, what)
      t.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body), what)
      const body = JSON.parse(r.body)
      t.equal(body.error, code, what)
      t.type(body.message, 'string', what)
      t.notOk('statusCode' in body, `${what}: not fastify's own shape`)
    }
  }
  // The listener still answers afterwards.
  t.equal((await fetch(`${s.base}/health`)).status, 200)
})

t.test('MCP: the SDK’s own refusals are JSON error bodies; unparsable bodies are JSON-RPC parse errors; the endpoint also at /mcp', async (t) => {
  const noteId = await readyNote(s, a.accountId, { transcript: transcriptOf([['A', 0, 1000, 'Hola, soy Marta.'], ['B', 1000, 2000, 'Yo soy Luis.']]) })
  for (const url of [`${s.base}/mcp/stream`, `${s.mcpUrl}/mcp`, `${s.mcpUrl}/`]) {
    const c = await s.connect(url, a.headers)
    t.ok((await c.listTools()).tools.some((x) => x.name === 'rename_speaker'), `${url}: tools listed`)
    t.match(structured(await c.callTool({ name: 'get_note', arguments: { noteId } })), { id: noteId }, `${url}: a tool answers`)
    // Arguments the input schema refuses.
    for (const args of [{}, { noteId: 'not-a-uuid', label: 'A', name: 'x' }, { noteId, label: 'A', name: '' }, { noteId, label: 'A', name: 7 }]) {
      const body = toolErrorBody(await c.callTool({ name: 'rename_speaker', arguments: args }))
      t.match(body, { error: 'invalid_request', message: /rename_speaker/ }, `${url}: ${JSON.stringify(args)}`)
    }
    // A tool this endpoint does not have.
    t.match(toolErrorBody(await c.callTool({ name: 'delete_everything', arguments: {} })), { error: 'not_found', message: /delete_everything/ }, `${url}: unknown tool`)
  }
  // The demo has only the read-only tools: a writing one is unknown there.
  const demo = await s.connect(`${s.mcpUrl}/demo`)
  t.match(toolErrorBody(await demo.callTool({ name: 'rename_speaker', arguments: { noteId, label: 'A', name: 'x' } })), { error: 'not_found' })

  const post = (url: string, body: string, headers: Record<string, string> = a.headers) =>
    fetch(url, { method: 'POST', headers: { ...headers, ...json, accept: 'application/json, text/event-stream' }, body })
  for (const url of [`${s.base}/mcp/stream`, `${s.mcpUrl}/`, `${s.mcpUrl}/mcp`, `${s.mcpUrl}/demo`]) {
    for (const body of ['{"jsonrpc":"2.0","id":1,"method":', 'not json', '']) {
      const r = await post(url, body)
      t.equal(r.status, 400, `${url} ${JSON.stringify(body)}`)
      t.match(await r.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: /^Parse error/ } }, `${url} ${JSON.stringify(body)}`)
    }
  }
  // Without a credential the 401 comes first, as for any request (nothing is parsed for a stranger).
  t.equal((await post(`${s.mcpUrl}/mcp`, 'not json', {})).status, 401)
  const mcpPath = await fetch(`${s.mcpUrl}/mcp`, { headers: a.headers })
  t.equal(mcpPath.status, 405, 'GET /mcp: no standalone stream, as at the root')
  t.equal(mcpPath.headers.get('allow'), 'POST')
})
