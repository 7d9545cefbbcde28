// POST/GET /v1/notes/{noteId}/deliverables and the file download: every kind and template of the
// spec, real .eml/.docx/.pptx files, 300 credits, 400 invalid_template, 402, 409, isolation.
import t from 'tap'
import JSZip from 'jszip'
import { testService } from './support/service.ts'
import { appendNote } from './support/notes.ts'
import { balance, moves } from './support/ledger.ts'
import { MEETINGS } from './fixtures/meetings.ts'
import { DELIVERABLE_TEMPLATES } from '../domain/deliverables/templates.ts'

const json = { 'content-type': 'application/json' }

/** Quoted-printable (the .eml text part) back to text. */
const unQP = (s: string) =>
  Buffer.from(
    s
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
    'latin1',
  ).toString('utf8')

t.test('deliverables', async (t) => {
  const s = await testService()
  t.teardown(s.close)
  const a = await s.account('pro')
  const es = MEETINGS[0]!
  const { noteId } = await appendNote(s, a.accountId, { title: es.title, language: 'es', lines: es.lines })
  const create = (body: unknown, id = noteId, headers = a.headers) => s.inject({ method: 'POST', url: `/v1/notes/${id}/deliverables`, headers: { ...headers, ...json }, payload: JSON.stringify(body) })
  const download = (url: string, headers: Record<string, string> = a.headers) => s.inject({ method: 'GET', url: new URL(url).pathname, headers })

  t.test('the templates are exactly the spec’s, and published in the contract', async (t) => {
    t.same(DELIVERABLE_TEMPLATES, {
      email: ['follow_up', 'recap', 'next_steps', 'thank_you'],
      document: ['project_brief', 'meeting_recap', 'fiscal_revision', 'legal_acta', 'medical_consult'],
      slides: ['exec_summary', 'kickoff', 'recap_visual', 'sales_pitch_es'],
    })
    const doc = (await s.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
    t.match(doc['x-service-deliverable-templates'], { ...DELIVERABLE_TEMPLATES, locales: ['es', 'en'] })
    t.equal(doc.paths['/v1/notes/{noteId}/deliverables'].post['x-service-credits'], 300)
    t.ok(doc.paths['/v1/notes/{noteId}/deliverables/{deliverableId}/file'].get['x-service-extension'])
  })

  t.test('an email: 201 with the deliverable, an .eml draft with subject and both parts, 300 credits', async (t) => {
    const before = await balance(s, a.accountId)
    const r = await create({ kind: 'email', template: 'follow_up', locale: 'es' })
    t.equal(r.statusCode, 201)
    const d = r.json().deliverable
    t.match(d, {
      id: String,
      noteId,
      kind: 'email',
      template: 'follow_up',
      locale: 'es',
      status: 'ready',
      title: 'Seguimiento: Reunión de lanzamiento de la web',
      content: /Hola a todos:[\s\S]*Próximos pasos:[\s\S]*Preparar el calendario de publicaciones — Lucía \(para el viernes\)/,
      fileName: 'seguimiento-reunion-de-lanzamiento-de-la-web.eml',
      contentType: 'message/rfc822',
      sizeBytes: Number,
      downloadUrl: `http://127.0.0.1:3000/v1/notes/${noteId}/deliverables/${d.id}/file`,
      model: 'local-extractive',
    })
    t.ok(Date.parse(d.createdAt) > 0)
    t.equal(await balance(s, a.accountId), before - 300)
    const f = await download(d.downloadUrl)
    t.equal(f.statusCode, 200)
    t.equal(f.headers['content-type'], 'message/rfc822')
    t.match(f.headers['content-disposition'], /attachment; filename="seguimiento-reunion-de-lanzamiento-de-la-web\.eml"/)
    const eml = f.rawPayload.toString('utf8')
    t.equal(f.rawPayload.length, d.sizeBytes)
    t.match(eml, /^Subject: =\?UTF-8\?Q\?Seguimiento/m)
    t.match(eml, /^X-Unsent: 1$/m)
    t.match(eml, new RegExp(`^Message-ID: <${d.id}@`, 'm'))
    t.match(eml, /Content-Type: multipart\/alternative/)
    t.match(eml, /Content-Type: text\/plain; charset=utf-8/)
    t.match(eml, /Content-Type: text\/html; charset=utf-8/)
    t.match(unQP(eml), /Preparar el calendario de publicaciones — Lucía \(para el viernes\)/)
  })

  t.test('a document: a .docx whose text is the deliverable', async (t) => {
    const r = await create({ kind: 'document', template: 'meeting_recap', locale: 'en' })
    t.equal(r.statusCode, 201)
    const d = r.json().deliverable
    t.match(d, { kind: 'document', title: 'Meeting recap: Reunión de lanzamiento de la web', fileName: /\.docx$/, content: /^# Meeting recap[\s\S]*## Decisions\n\n- Decidimos bajar la publicidad pagada/ })
    const f = await download(d.downloadUrl)
    t.equal(f.headers['content-type'], 'application/vnd.openxmlformats-officedocument.wordprocessingml.document')
    const zip = await JSZip.loadAsync(f.rawPayload)
    const xml = await zip.file('word/document.xml')!.async('string')
    t.match(xml, /Meeting recap: Reunión de lanzamiento de la web/)
    t.match(xml, /Decidimos bajar la publicidad pagada a quince mil euros/)
    t.match(xml, /Action items/)
  })

  t.test('slides: a .pptx with a title slide and one slide per section', async (t) => {
    const r = await create({ kind: 'slides', template: 'sales_pitch_es', locale: 'es' })
    t.equal(r.statusCode, 201)
    const d = r.json().deliverable
    const f = await download(d.downloadUrl)
    t.equal(f.headers['content-type'], 'application/vnd.openxmlformats-officedocument.presentationml.presentation')
    const zip = await JSZip.loadAsync(f.rawPayload)
    const slides = Object.keys(zip.files).filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n))
    t.ok(slides.length >= 3, `${slides.length} slides`)
    t.match(await zip.file('ppt/slides/slide1.xml')!.async('string'), /Propuesta: Reunión de lanzamiento de la web/)
    const all = (await Promise.all(slides.map((n) => zip.file(n)!.async('string')))).join('\n')
    t.match(all, /Próximos pasos/)
    t.match(all, /cuarenta mil euros/, 'the figures said in the meeting')
  })

  t.test('every kind and template of the spec in both locales', async (t) => {
    const before = await balance(s, a.accountId)
    let n = 0
    for (const [kind, templates] of Object.entries(DELIVERABLE_TEMPLATES)) {
      for (const template of templates) {
        const locale = n++ % 2 ? 'en' : 'es'
        const r = await create({ kind, template, locale })
        t.equal(r.statusCode, 201, `${kind}/${template}/${locale}`)
        t.match(r.json().deliverable, { kind, template, locale, status: 'ready' })
        t.ok(r.json().deliverable.content.length > 50)
      }
    }
    t.equal(await balance(s, a.accountId), before - 300 * n)
    const list = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/deliverables`, headers: a.headers })
    t.equal(list.statusCode, 200)
    const items = list.json().items
    t.equal(items.length, n + 3)
    t.same(
      items.map((d: { createdAt: string }) => d.createdAt),
      items.map((d: { createdAt: string }) => d.createdAt).sort().reverse(),
      'newest first',
    )
  })

  t.test('400 invalid_template for an unknown kind, template or locale, or a template of another kind; nothing charged', async (t) => {
    const before = await balance(s, a.accountId)
    for (const body of [
      { kind: 'fax', template: 'follow_up', locale: 'es' },
      { kind: 'email', template: 'kickoff', locale: 'es' },
      { kind: 'slides', template: 'nope', locale: 'en' },
      { kind: 'document', template: 'legal_acta', locale: 'fr' },
      { kind: 'document', template: 'legal_acta' },
      {},
      'x',
    ]) {
      const r = await create(body)
      t.equal(r.statusCode, 400, JSON.stringify(body))
      t.equal(r.json().error, 'invalid_template')
    }
    t.equal(await balance(s, a.accountId), before)
  })

  t.test('402 insufficient_credits, 409 note_not_ready, 404 for another account (create, list and file), 401 without a key', async (t) => {
    const poor = await s.account('pro')
    const note = await appendNote(s, poor.accountId, { lines: es.lines, language: 'es' })
    await s.services.credits.charge(poor.accountId, { operation: 'test', cost: 4800 })
    const r = await create({ kind: 'email', template: 'recap', locale: 'en' }, note.noteId, poor.headers)
    t.equal(r.statusCode, 402)
    t.match(r.json(), { error: 'insufficient_credits', balance: 200, required: 300 })
    t.same((await moves(s, poor.accountId, 'deliverable')).charges, [])
    const processing = await appendNote(s, a.accountId, { processing: true })
    const p = await create({ kind: 'email', template: 'recap', locale: 'en' }, processing.noteId)
    t.equal(p.statusCode, 409)
    t.equal(p.json().error, 'note_not_ready')
    const b = await s.account('pro')
    t.equal((await create({ kind: 'email', template: 'recap', locale: 'en' }, noteId, b.headers)).statusCode, 404)
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/deliverables`, headers: b.headers })).statusCode, 404)
    const mine = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/deliverables`, headers: a.headers })).json().items[0]
    t.equal((await download(mine.downloadUrl, b.headers)).statusCode, 404)
    t.equal((await download(mine.downloadUrl, {})).statusCode, 401)
    t.equal((await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/deliverables/${noteId}/file`, headers: a.headers })).statusCode, 404)
  })
})
