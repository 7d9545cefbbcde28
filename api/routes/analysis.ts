// Analyses and outlines over REST (spec part 4): thin edges over AnalysisCommands and the
// analysis queries, which the MCP tools (generate_ai_notes, generate_outline, get_outline) call too.
import { z } from 'zod'
import type { Application } from '../../commands/application.ts'
import { PRICES } from '../../domain/credits/prices.ts'
import { Analysis, AnalysisList, AnalysisQuery, GenerateAnalysisRequest, Outline, OutlineQuery, Template, templatesOf } from '../../contract/analysis.ts'
import { NoteIdParams } from '../../contract/notes.ts'

import { HighlightList, HighlightQuery, MarkerList } from '../../contract/highlights.ts'
import { defineRoute, type RouteDef } from '../route.ts'

const AnalysisHistory = z
  .object({
    noteId: z.uuid(),
    template: Template,
    generations: z.array(z.object({ analysis: Analysis, engine: z.string(), model: z.string(), version: z.string(), latest: z.boolean() })),
  })
  .meta({ id: 'AnalysisHistory' })

export const analysisRoutes = (app: Application): RouteDef[] => [
  defineRoute({
    operationId: 'getAnalyses',
    method: 'GET',
    path: '/v1/notes/:id/analysis',
    tag: 'analysis',
    summary: 'The analyses persisted for a note (the latest per template)',
    params: NoteIdParams,
    notFound: true,
    query: AnalysisQuery,
    invalidCode: 'invalid_query',
    response: { status: 200, schema: AnalysisList, description: 'The analyses, sorted by template.' },
    errors: ['invalid_query', 'not_found', 'analysis_not_generated'],
    handle: ({ caller, params, query }) => app.queries.analysis.list(caller.accountId, params.id, query.template),
  }),
  defineRoute({
    operationId: 'generateAnalyses',
    method: 'POST',
    path: '/v1/notes/:id/analysis',
    tag: 'analysis',
    summary: 'Generate or regenerate analyses (100 credits per template that comes out)',
    description:
      '`template` and/or `templates` (1 to 8). When both are sent, the union is generated: `template` first, then `templates` in order, each template once, at most 8 in all. ' +
      'Each template is charged 100 credits and refunded (a ledger event) if it fails; `report.ok` lists those that came out, `report.failed` the others with the reason. ' +
      'When every template fails the answer is 502 `llm_invalid_json` and nothing is charged. Regenerating keeps the earlier generations as history.',
    params: NoteIdParams,
    notFound: true,
    body: GenerateAnalysisRequest,
    invalidCode: 'invalid_request',
    response: { status: 200, schema: AnalysisList, description: 'The note’s analyses after the generation, with `report`.' },
    errors: ['invalid_request', 'not_found', 'upgrade_required', 'note_not_ready', 'llm_invalid_json'],
    price: PRICES.analysis,
    handle: ({ caller, params, body }) => app.analysis.generate(caller, params.id, templatesOf(body)),
  }),
  defineRoute({
    operationId: 'getAnalysisHistory',
    method: 'GET',
    path: '/v1/notes/:id/analysis/history',
    tag: 'analysis',
    summary: 'Every generation of one template, newest first, with the engine, model and version that made it',
    extension: true,
    params: NoteIdParams,
    notFound: true,
    query: z.object({ template: Template }),
    invalidCode: 'invalid_query',
    response: { status: 200, schema: AnalysisHistory, description: 'The generations (empty when none).' },
    errors: ['invalid_query', 'not_found'],
    handle: async ({ caller, params, query }) => ({ noteId: params.id, template: query.template, generations: await app.queries.analysis.history(caller.accountId, params.id, query.template) }),
  }),
  defineRoute({
    operationId: 'getOutline',
    method: 'GET',
    path: '/v1/notes/:id/outline',
    tag: 'analysis',
    summary: 'The note’s chapters; `generate=1` makes them when there are none (50 credits)',
    description:
      'Reading is free. With `generate=1` on a note without an outline, one is generated and charged; an attempt that fails is refunded and shows as `attemptedAt` with `generated: false`. ' +
      'Chapters cover the audio from 0 to its end, in order, without gaps or overlaps; each boundary is the start of a transcript segment.',
    params: NoteIdParams,
    notFound: true,
    query: OutlineQuery,
    invalidCode: 'invalid_query',
    response: { status: 200, schema: Outline, description: 'The outline (an empty array when there is none).' },
    errors: ['invalid_query', 'not_found', 'insufficient_credits', 'note_not_ready'],
    price: PRICES.outline,
    handle: ({ caller, params, query }) => app.analysis.outline(caller, params.id, query.generate === '1'),
  }),
  defineRoute({
    operationId: 'listHighlights',
    method: 'GET',
    path: '/v1/notes/:id/highlights',
    tag: 'analysis',
    summary: 'The moments the analyses and the outline point at, with their times (MCP list_highlights)',
    extension: true,
    params: NoteIdParams,
    notFound: true,
    query: HighlightQuery,
    invalidCode: 'invalid_query',
    response: { status: 200, schema: HighlightList, description: 'Key points, action items, decisions and questions with an anchor, and chapters, by time.' },
    errors: ['invalid_query', 'not_found'],
    handle: ({ caller, params, query }) => app.queries.analysis.highlights(caller.accountId, params.id, query.template),
  }),
  defineRoute({
    operationId: 'listMarkers',
    method: 'GET',
    path: '/v1/notes/:id/markers',
    tag: 'analysis',
    summary: 'Chapter markers of the outline (MCP list_markers)',
    extension: true,
    params: NoteIdParams,
    notFound: true,
    invalidCode: 'invalid_query',
    response: { status: 200, schema: MarkerList, description: 'The chapters as markers (empty without an outline).' },
    errors: ['not_found'],
    handle: ({ caller, params }) => app.queries.analysis.markers(caller.accountId, params.id),
  }),
]
