// Empty bodies sent with `Content-Type: application/json` (many HTTP clients label every request
// so): no body where a body is optional or absent, a clear 400 where one is needed (issue 17).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { testService } from './support/service.ts'

t.test('empty JSON bodies', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const post = (url: string, payload = '') => s.inject({ method: 'POST', url, headers: { ...a.headers, 'content-type': 'application/json' }, payload })

  t.test('given a waiting upload, when finalize is sent an empty JSON body, then it is judged as no body (409, not 400)', async (t) => {
    const created = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ filename: 'a.wav', contentType: 'audio/wav' }) })
    const r = await post(`/v1/notes/${created.json().noteId}/finalize`)
    t.equal(r.statusCode, 409)
    t.equal(r.json().error, 'invalid_state')
  })

  t.test('given an unknown note, when translation and suggest are sent an empty JSON body, then 404 (not 400 invalid_language)', async (t) => {
    for (const path of ['transcript/translation', 'speakers/suggest', 'finalize']) {
      const r = await post(`/v1/notes/${randomUUID()}/${path}`)
      t.equal(r.statusCode, 404, path)
      // The note-level code of the transcript side is another item of issue 17 (item 5).
      t.match(r.json().error, /^(not_found|no_transcript)$/, path)
    }
  })

  t.test('whitespace only is no body either', async (t) => {
    t.equal((await post(`/v1/notes/${randomUUID()}/transcript/translation`, ' \r\n')).statusCode, 404)
  })

  t.test('a route that needs a body says what is missing', async (t) => {
    const r = await post('/v1/notes')
    t.equal(r.statusCode, 400)
    t.match(r.json(), { error: 'invalid_audio_url', message: /audioUrl/ })
  })

  t.test('malformed JSON is still refused with the route’s 400 code; a prototype-poisoning key is dropped, never merged', async (t) => {
    const bad = await post('/v1/notes', '{"audioUrl":')
    t.equal(bad.statusCode, 400)
    t.equal(bad.json().error, 'invalid_audio_url')
    // A body the OpenAPI document allows (extra properties are ignored) is not refused for a key's
    // name: the key is removed by the parser and the request is judged on the rest (404: no such note).
    const proto = await post(`/v1/notes/${randomUUID()}/ask`, '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"question":"hi"}')
    t.equal(proto.statusCode, 404, proto.body)
    t.equal(({} as { polluted?: number }).polluted, undefined, 'Object.prototype untouched')
  })

  t.test('a method the path does not have is 405, even when fastify would refuse its body first (QUERY without Content-Type) or a parameter could take the literal’s place', async (t) => {
    const r = await s.inject({ method: 'QUERY' as 'GET', url: '/v1/voice-profiles', headers: a.headers })
    t.equal(r.statusCode, 405)
    t.equal(r.json().error, 'method_not_allowed')
    t.match(r.headers.allow, /GET/)
    // A literal segment is its own resource, not a value of the parameter beside it (schemathesis found these).
    for (const [method, url, allow] of [
      ['PATCH', '/v1/voice-profiles/consent', 'DELETE, POST'],
      ['PATCH', `/v1/notes/${randomUUID()}/speakers/timeline`, 'GET, HEAD'],
      ['OPTIONS', `/v1/notes/${randomUUID()}/speakers/suggest`, 'POST'],
    ] as const) {
      const r = await s.inject({ method: method as 'GET', url, headers: { ...a.headers, 'content-type': 'application/json' }, payload: '{"name":"x","voiceExcluded":true}' })
      t.equal(r.statusCode, 405, `${method} ${url}`)
      t.equal(r.headers.allow, allow)
    }
    t.equal((await s.inject({ method: 'GET', url: '/v1/notes/abc', headers: a.headers })).statusCode, 404, 'an id that is no uuid is still 404')
    const none = await s.inject({ method: 'QUERY' as 'GET', url: '/v1/nothing-here', headers: a.headers })
    t.equal(none.statusCode, 404)
    t.equal(none.json().error, 'not_found')
  })
})
