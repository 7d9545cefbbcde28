// The MCP tools and the demo library over MongoDB read models (FerretDB, which `npm test` starts):
// the queries behind the tools use nothing the embedded store has and MongoDB lacks.
import t from 'tap'
import { mcpTestService, markTranscribed, structured } from './support/mcp.ts'
import { DEMO_NOTES } from '../domain/demo/dataset.ts'

t.test('tools on MongoDB read models', async (t) => {
  const s = await mcpTestService({ mongo: true })
  t.teardown(s.close)
  const a = await s.account('free')
  const c = await s.connect(s.mcpUrl, a.headers)
  const imported = structured(await c.callTool({ name: 'import_from_url', arguments: { audioUrl: 'https://media.example.org/mongo.mp3', title: 'Ferret notes' } }))
  await markTranscribed(s, imported.noteId, [['A', 'Ferrets sleep eighteen hours a day.']])
  t.same(structured(await c.callTool({ name: 'search_notes', arguments: { q: 'ferrets eighteen' } })).notes.map((n: { id: string }) => n.id), [imported.noteId])
  t.match(structured(await c.callTool({ name: 'get_note', arguments: { noteId: imported.noteId } })), { status: 'ready', transcript: { fullText: /eighteen hours/ } })
  t.match(structured(await c.callTool({ name: 'wait_for_transcription', arguments: { noteId: imported.noteId, timeoutSeconds: 2 } })), { status: 'ready', finished: true })
  t.match(structured(await c.callTool({ name: 'founder_status', arguments: {} })), {
    plan: 'free',
    credits: { left: 150, reserved: 50 },
    usage: { byOperation: [{ operation: 'import', count: 1, credits: 50 }], notes: { total: 1, ready: 1 } },
  })
  const demo = await s.connect(`${s.mcpUrl}/demo`)
  t.equal(structured(await demo.callTool({ name: 'list_recent_notes', arguments: { limit: 100 } })).notes.length, DEMO_NOTES.length)
  t.match(structured(await demo.callTool({ name: 'list_folders', arguments: {} })).folders, [{ name: 'Meetings', noteCount: 2 }, { name: 'Podcasts', noteCount: 1 }])
})
