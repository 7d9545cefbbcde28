// One charged operation run through its real command in a process of its own (test service on
// DATA_DIR: SQLite events, embedded read models), with the FAULT_INJECT points of the
// charge/failure/refund path (CreditCommands.settlePending): test/credits.refunds.crash.test.ts
// kills it there with SIGKILL. CHARGE_OP_OUTCOME=fail makes the operation fail after its charge:
// the language engine is an endpoint that refuses connections (ask, outline, deliverable), the
// analyses cannot be recorded (analysis), the clip's audio is missing (clip). Prints
// `{"accountId": ...}` before the operation and `{"outcome": ...}` after it.
//   DATA_DIR=... OPERATION=<name> CHARGE_OP_OUTCOME=fail|ok FAULT_INJECT=<point> tsx test/support/chargedCommandProcess.ts
import { Readable } from 'node:stream'
import { testService } from './service.ts'
import { readyNote, transcriptOf } from './transcripts.ts'
import { wavBytes } from './media.ts'
import { analysisStream } from '../../domain/analysis/analysis.ts'
import type { Caller } from '../../commands/context.ts'

type ChargedOperation = 'ask-note' | 'ask-library' | 'outline' | 'deliverable' | 'analysis' | 'clip' | 'transcript'

const operation = process.env.OPERATION as ChargedOperation
const fail = process.env.CHARGE_OP_OUTCOME === 'fail'
const languageFails = fail && ['ask-note', 'ask-library', 'outline', 'deliverable'].includes(operation)

const s = await testService({
  dataDir: process.env.DATA_DIR!,
  env: {
    CREDIT_HOLD_LEASE_SECONDS: process.env.CREDIT_HOLD_LEASE_SECONDS ?? '60',
    ...(process.env.FAULT_INJECT ? { FAULT_INJECT: process.env.FAULT_INJECT } : {}),
    // Port 9 (discard) refuses connections: the engine fails at once.
    ...(languageFails ? { LANGUAGE_ENGINE: 'remote', LLM_BASE_URL: 'http://127.0.0.1:9/v1' } : {}),
  },
  wrapEvents: (events) =>
    fail && operation === 'analysis'
      ? new Proxy(events, {
          get(target, prop, receiver) {
            if (prop === 'appendToStream') {
              return (stream: string, ...rest: unknown[]) =>
                analysisStream.owns(stream) ? Promise.reject(new Error('the event store refused the analyses')) : (target.appendToStream as (...a: unknown[]) => unknown)(stream, ...rest)
            }
            const v = Reflect.get(target, prop, receiver)
            return typeof v === 'function' ? v.bind(target) : v
          },
        })
      : events,
})
const { accountId } = await s.account('pro')
const transcript = transcriptOf([
  ['A', 0, 9000, 'The budget for the next quarter is approved and the launch moves to June.'],
  ['B', 9000, 18000, 'Marketing needs the final numbers by Friday so the campaign can start.'],
  ['A', 18000, 27000, 'We agreed to hire two engineers and to review the plan next week.'],
])
let audioBlobKey: string | undefined
if (operation === 'clip') {
  audioBlobKey = `uploads/${accountId}-talk.wav`
  // A failing clip: the note names audio that was never stored.
  if (!fail) await s.services.blobs.put(audioBlobKey, Readable.from(wavBytes(30)), { contentType: 'audio/wav', maxBytes: 10_000_000 })
}
const noteId = await readyNote(s, accountId, { transcript, ...(audioBlobKey ? { audioBlobKey } : {}) })
await s.services.sync.waitFor('segment-index', (await s.services.events.readStream(`note-${noteId}`)).events.at(-1)!.globalPosition)
console.log(JSON.stringify({ accountId, noteId }))

const caller: Caller = { accountId, plan: 'pro', keyId: null, requestId: `crash-${operation}`, via: 'rest' }
const run: Record<ChargedOperation, () => Promise<unknown>> = {
  'ask-note': () => s.services.ask.askNote(caller, noteId, { question: 'When is the launch?' }),
  'ask-library': () => s.services.ask.askLibrary(caller, { question: 'When is the launch?' }),
  outline: () => s.services.analysis.outline(caller, noteId, true),
  deliverable: () => s.services.deliverables.create(caller, noteId, { kind: 'email', template: 'follow_up', locale: 'en' } as never),
  analysis: () => s.services.analysis.generate(caller, noteId, ['generic']),
  clip: () => s.services.clips.extract(caller, { noteId, startMs: 1000, endMs: 6000 }),
  transcript: () => s.services.transcripts.readTranscript(caller, noteId, { format: 'json' } as never),
}
let outcome: string
try {
  await run[operation]()
  outcome = 'ok'
} catch (err) {
  outcome = `failed: ${(err as { code?: string }).code ?? ''} ${(err as Error).message}`
}
console.log(JSON.stringify({ outcome }))
await s.close()
