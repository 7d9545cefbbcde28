// A charged request retried over HTTP with the same Idempotency-Key (issue 13, finding 4): the
// client's first attempt timed out (its answer never reached the client, here: thrown away), so
// it sends the same request again. Applied once, the same answer, one charge. The same key with
// another question is refused: the spec says nothing of Idempotency-Key, so this answers as
// Stripe does (a key names one request; another body under it is an error) with a code the spec
// has, 409 `invalid_state`. Before: the retry answered in a new conversation (another
// `sessionId`, the question recorded twice), and another question under the same key rode on the
// first charge, answered for free.
import t from 'tap'
import { testService } from './support/service.ts'
import { appendNote } from './support/notes.ts'
import { balance, moves } from './support/ledger.ts'
import { askStream } from '../domain/ask/session.ts'

const json = { 'content-type': 'application/json' }

t.test('POST ask retried with the same Idempotency-Key', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const note = await appendNote(s, a.accountId, {
    title: 'Budget',
    language: 'en',
    lines: [
      ['A', 'The budget for the marketing campaign is forty thousand euros.'],
      ['B', 'Marta owns the marketing campaign and reports every Monday.'],
    ],
  })
  const askNote = (key: string, question: string) =>
    s.inject({ method: 'POST', url: `/v1/notes/${note.noteId}/ask`, headers: { ...a.headers, ...json, 'idempotency-key': key }, payload: JSON.stringify({ question }) })
  const askLibrary = (key: string, question: string) => s.inject({ method: 'POST', url: '/v1/ask', headers: { ...a.headers, ...json, 'idempotency-key': key }, payload: JSON.stringify({ question }) })
  const questionsIn = async (sessionId: string) => (await s.services.events.readStream(askStream.of(sessionId))).events.filter((e) => e.type === 'QuestionAnswered').length

  t.test('given a first attempt whose answer the client never got, when it retries, then the same answer, one charge, one recorded question', async (t) => {
    const before = await balance(s, a.accountId)
    const charges = (await moves(s, a.accountId, 'ask')).charges.length
    const lost = await askNote('retry-1', 'What is the budget for the marketing campaign?')
    t.equal(lost.statusCode, 200)
    const retried = await askNote('retry-1', 'What is the budget for the marketing campaign?')
    t.equal(retried.statusCode, 200)
    t.same(retried.json(), lost.json(), 'the same answer, the same sessionId')
    t.equal(await balance(s, a.accountId), before - 10, 'charged once')
    t.equal((await moves(s, a.accountId, 'ask')).charges.length, charges + 1, 'one charge in the ledger')
    t.equal(await questionsIn(lost.json().sessionId), 1, 'the question is recorded once')
  })

  t.test('given a key already used, when another question comes with it, then 409 invalid_state and nothing charged', async (t) => {
    await askNote('retry-2', 'Who owns the marketing campaign?')
    const before = await balance(s, a.accountId)
    const other = await askNote('retry-2', 'When does Marta report?')
    t.equal(other.statusCode, 409)
    t.match(other.json(), { error: 'invalid_state', message: /Idempotency-Key/ })
    t.equal(await balance(s, a.accountId), before, 'no answer for free, and no second charge')
  })

  t.test('the library question too: a retry answers as the first, once charged', async (t) => {
    const before = await balance(s, a.accountId)
    const lost = await askLibrary('retry-3', 'Who owns the marketing campaign?')
    const retried = await askLibrary('retry-3', 'Who owns the marketing campaign?')
    t.equal(retried.statusCode, 200)
    t.same(retried.json(), lost.json())
    t.equal(await balance(s, a.accountId), before - 10)
    const other = await askLibrary('retry-3', 'What is the budget?')
    t.match({ status: other.statusCode, body: other.json() }, { status: 409, body: { error: 'invalid_state' } })
  })

  t.test('another key is another request: charged again', async (t) => {
    const before = await balance(s, a.accountId)
    const r = await askNote('retry-4', 'What is the budget for the marketing campaign?')
    t.equal(r.statusCode, 200)
    t.equal(await balance(s, a.accountId), before - 10)
  })
})

t.test('POST /v1/notes retried with the same Idempotency-Key', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const create = (key: string, body: Record<string, unknown>) =>
    s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json, 'idempotency-key': key }, payload: JSON.stringify(body) })

  t.test('given an import whose answer the client never got, when it retries, then the same answer and one 50-credit hold', async (t) => {
    const before = await balance(s, a.accountId)
    const lost = await create('note-1', { audioUrl: 'https://media.example.org/first.mp3' })
    const retried = await create('note-1', { audioUrl: 'https://media.example.org/first.mp3' })
    t.equal(retried.statusCode, 202)
    t.same(retried.json(), lost.json())
    t.equal(await balance(s, a.accountId), before - 50, 'held once')
  })

  t.test('given a key longer than 200 characters, then 400 invalid_request naming the header, and nothing held', async (t) => {
    const before = await balance(s, a.accountId)
    const r = await create('k'.repeat(201), { audioUrl: 'https://media.example.org/long-key.mp3' })
    t.equal(r.statusCode, 400)
    t.match(r.json(), { error: 'invalid_request', message: /Idempotency-Key/ })
    t.equal(await balance(s, a.accountId), before)
  })

  t.test('given a key the service cannot use (a space, or sent twice), then 400 invalid_request on any route, never a silent new request id', async (t) => {
    const spaced = await create('two words', { audioUrl: 'https://media.example.org/spaced.mp3' })
    t.equal(spaced.statusCode, 400)
    t.match(spaced.json(), { error: 'invalid_request', message: /Idempotency-Key/ })
    const ask = await s.inject({ method: 'POST', url: '/v1/ask', headers: { ...a.headers, ...json, 'idempotency-key': 'x'.repeat(201) }, payload: JSON.stringify({ question: 'anything?' }) })
    t.equal(ask.statusCode, 400, 'a paid operation too: its retry would otherwise be charged again')
    t.match(ask.json(), { error: 'invalid_request', message: /Idempotency-Key/ })
  })

  t.test('given a key already used, when another link comes with it, then 409 invalid_state with the note state, and the first hold stays', async (t) => {
    const first = await create('note-2', { audioUrl: 'https://media.example.org/second.mp3' })
    const held = await balance(s, a.accountId)
    const other = await create('note-2', { audioUrl: 'https://media.example.org/another.mp3' })
    t.equal(other.statusCode, 409)
    t.match(other.json(), { error: 'invalid_state', current: 'processing', message: /Idempotency-Key/ })
    t.equal(await balance(s, a.accountId), held, 'nothing held or released')
    const note = await s.inject({ method: 'GET', url: `/v1/notes/${first.json().noteId}`, headers: a.headers })
    t.equal(note.json().sourceUrl, 'https://media.example.org/second.mp3', 'the note is the first request\'s')
  })
})
