// A deliverable, stream `deliverable-<id>`: an email, document or slide deck generated from a
// note, stored as a file. Created once; a retried creation with the same id records nothing.
import type { Decider, DomainEvent } from '../decider.ts'
import { DomainError } from '../errors.ts'
import type { DeliverableSection } from '../language/content.ts'
import type { DeliverableKind } from './templates.ts'
import { streamKind } from '../streams.ts'

export const deliverableStream = streamKind('deliverable')

export type DeliverableFile = { blobKey: string; fileName: string; contentType: string; sizeBytes: number; sha256: string }

export type DeliverableCreated = DomainEvent<
  'DeliverableCreated',
  {
    deliverableId: string
    noteId: string
    accountId: string
    kind: DeliverableKind
    template: string
    locale: 'es' | 'en'
    title: string
    subject: string | null
    sections: DeliverableSection[]
    file: DeliverableFile
    engine: string
    model: string
    version: string
    chargeId: string
    at: string
  }
>
export type DeliverableEvent = DeliverableCreated

export type DeliverableCommand = { type: 'CreateDeliverable'; now: string } & Omit<DeliverableCreated['data'], 'at'>

export type DeliverableState = { exists: false } | { exists: true; accountId: string; noteId: string }

/** Which analysis template a deliverable is built on (its content comes from that analysis). */
export const DELIVERABLE_BASIS: Readonly<Record<string, string>> = {
  follow_up: 'meeting_minutes',
  recap: 'generic',
  next_steps: 'meeting_minutes',
  thank_you: 'generic',
  project_brief: 'consulting',
  meeting_recap: 'meeting_minutes',
  fiscal_revision: 'consulting',
  legal_acta: 'legal',
  medical_consult: 'medical',
  exec_summary: 'generic',
  kickoff: 'meeting_minutes',
  recap_visual: 'generic',
  sales_pitch_es: 'sales',
}

/** File type per kind. */
export const DELIVERABLE_FILES: Readonly<Record<DeliverableKind, { extension: string; contentType: string }>> = {
  email: { extension: 'eml', contentType: 'message/rfc822' },
  document: { extension: 'docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
  slides: { extension: 'pptx', contentType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' },
}

export function decideDeliverable(c: DeliverableCommand, s: DeliverableState): DeliverableEvent[] {
  if (s.exists) {
    if (s.accountId !== c.accountId) throw new DomainError('conflict', 'This deliverable id is taken.')
    return []
  }
  const { type: _, now, ...data } = c
  return [{ type: 'DeliverableCreated', data: { ...data, at: now } }]
}

export const deliverableDecider: Decider<DeliverableCommand, DeliverableEvent, DeliverableState> = {
  decide: decideDeliverable,
  evolve: (_s, e) => ({ exists: true, accountId: e.data.accountId, noteId: e.data.noteId }),
  initialState: () => ({ exists: false }),
}

/** The deliverable as Markdown: what `content` shows and what the file holds. */
export function deliverableMarkdown(d: { title: string; subject: string | null; sections: readonly DeliverableSection[] }, kind: DeliverableKind): string {
  const out: string[] = kind === 'email' ? [] : [`# ${d.title}`, '']
  for (const s of d.sections) {
    if (s.heading) out.push(kind === 'email' ? `${s.heading}:` : `## ${s.heading}`, ...(kind === 'email' ? [] : ['']))
    for (const p of s.paragraphs) out.push(p, '')
    for (const b of s.bullets) out.push(`- ${b}`)
    if (s.bullets.length > 0) out.push('')
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trim()
}
