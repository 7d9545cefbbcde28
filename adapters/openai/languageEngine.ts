// The language-engine port over any OpenAI-compatible chat endpoint (through the chat-model
// port). The model is asked for JSON with a JSON Schema generated from the same zod schemas the
// API publishes, and its answer is validated with them; an invalid answer is sent back once with
// the validation errors, and a second invalid answer fails (LanguageEngineError invalid_output).
// Positions the model gives are snapped to segment starts, so anchors and chapter boundaries are
// always exact segment starts, as with the local engine.
import { z } from 'zod'
import { ChatModelError, type ChatMessage, type ChatModel } from '../../ports/chatModel.ts'
import {
  LanguageEngineError,
  type AnalysisDraft,
  type ChapterDraft,
  type DeliverableDraft,
  type EngineInfo,
  type LanguageEngine,
  type SourceSegment,
  type SourceTranscript,
} from '../../ports/languageEngine.ts'
import { audioDurationMs } from '../../domain/language/content.ts'
import { AnalysisContent, OutlineContent } from '../../contract/analysis.ts'
import { AnswerContent } from '../../contract/ask.ts'
import { DeliverableContent } from '../../contract/deliverables.ts'
import { PROFILES } from '../../domain/language/templates.ts'
import { mmss } from '../../domain/language/time.ts'

/** Bumped when the prompts change, so stored results say which prompts made them. */
export const PROMPT_VERSION = 'prompts-1'

export interface OpenAiLanguageEngineOptions {
  /** Transcript characters sent at most (longer transcripts are cut, and the model is told). */
  maxTranscriptChars?: number
}

const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>

/** The JSON inside a reply (models sometimes wrap it in a code fence). */
function parseJson(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)
  return JSON.parse((fenced ? fenced[1]! : text).trim())
}

/** How the prompts say who speaks (the name in use, else the diarization letter: domain/language/content.ts). */
const WHO_SPEAKS =
  'Who speaks is given by name, or by a diarization letter (A, B, ...) when the speaker has no name; in text, write such a speaker as "Speaker A". '

function renderTranscript(t: SourceTranscript, max: number): string {
  const lines: string[] = []
  let size = 0
  for (const s of t.segments) {
    const line = `[startMs=${s.startMs} | ${mmss(s.startMs)} | ${s.speaker ?? '-'}] ${s.text.trim()}`
    if (size + line.length > max) {
      lines.push(`(transcript cut here: ${t.segments.length - lines.length} more segments not shown)`)
      break
    }
    lines.push(line)
    size += line.length + 1
  }
  return lines.join('\n')
}

/** The start of the segment that contains `ms` (or starts exactly there); null when none does. */
function snap(ms: number | null, segments: readonly SourceSegment[]): number | null {
  if (ms === null) return null
  let hit: SourceSegment | undefined
  for (const s of segments) {
    if (s.startMs === ms) return ms
    if (s.startMs <= ms && ms < s.endMs) hit = s
  }
  return hit ? hit.startMs : null
}

export function openAiLanguageEngine(chat: ChatModel, options: OpenAiLanguageEngineOptions = {}): LanguageEngine {
  const maxChars = options.maxTranscriptChars ?? 120_000
  const info = (model: string): EngineInfo => ({ engine: 'openai-compatible', model, version: PROMPT_VERSION })

  /**
   * Asks for JSON matching `schema`, validates it (and `check`), and on an invalid answer asks
   * once more with the problems listed.
   */
  async function structured<S extends z.ZodType, T>(
    name: string,
    schema: S,
    messages: ChatMessage[],
    check: (value: z.infer<S>) => T,
    signal?: AbortSignal,
  ): Promise<{ value: T; model: string }> {
    const conversation = [...messages]
    let lastProblem = ''
    for (let attempt = 0; attempt < 2; attempt++) {
      let reply
      try {
        reply = await chat.complete({ messages: conversation, jsonSchema: { name, schema: jsonSchema(schema) }, temperature: 0.2, ...(signal ? { signal } : {}) })
      } catch (err) {
        if (err instanceof ChatModelError) throw new LanguageEngineError('unavailable', err.message)
        throw err
      }
      let problem: string
      try {
        const parsed = schema.safeParse(parseJson(reply.content))
        if (parsed.success) return { value: check(parsed.data), model: reply.model }
        problem = parsed.error.issues
          .slice(0, 10)
          .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
          .join('; ')
      } catch (err) {
        problem = err instanceof SyntaxError ? `not valid JSON (${err.message})` : err instanceof InvalidAnswer ? err.message : String(err)
        if (!(err instanceof SyntaxError) && !(err instanceof InvalidAnswer)) throw err
      }
      lastProblem = problem
      conversation.push({ role: 'assistant', content: reply.content }, { role: 'user', content: `That answer is not valid: ${problem}. Answer again with one JSON object that follows the schema exactly.` })
    }
    throw new LanguageEngineError('invalid_output', `the model answered twice with invalid JSON for ${name}: ${lastProblem}`)
  }

  const system = (task: string) =>
    `You are the language engine of a transcription service. ${task} Use only what the transcript says; never invent facts, names or dates. Answer with a single JSON object and nothing else.`

  return {
    info: info(chat.model),

    async analyze(t, template, opts) {
      const profile = PROFILES[template]
      if (!profile) throw new Error(`unknown analysis template ${template}`)
      const debate = template === 'debate'
      const messages: ChatMessage[] = [
        {
          role: 'system',
          content: system(
            `Analyse the transcript with the "${template}" template: ${profile.purpose} ` +
              `Write in the transcript's language. ${WHO_SPEAKS}summary: a short paragraph. keyPoints, decisions, questions: short sentences. ` +
              `actionItems: text, assignee (the name or speaker who will do it, "" if nobody is named), deadline (as said, "" if none). ` +
              `topics: short noun phrases. anchors: for keyPoints, actionItems, decisions and questions, one entry per item, index by index: the startMs of the transcript line where it is said, copied exactly, or null. ` +
              (debate
                ? 'sections: positions, arguments, quotes, agreements, disagreements; each item has text, speaker (as in the line) and t (the startMs of its line). '
                : 'sections: null. ') +
              'mindmap: Mermaid "mindmap" source of the main ideas, or null.',
          ),
        },
        { role: 'user', content: `Title: ${t.title}\nTranscript (one line per segment):\n${renderTranscript(t, maxChars)}` },
      ]
      const { value, model } = await structured(
        'analysis',
        AnalysisContent,
        messages,
        (a): AnalysisDraft => {
          if (!debate && a.sections !== null) a = { ...a, sections: null }
          if (debate && a.sections === null) throw new InvalidAnswer('sections are required for the debate template')
          const anchors = a.anchors
            ? {
                keyPoints: a.anchors.keyPoints.map((x) => snap(x, t.segments)),
                actionItems: a.anchors.actionItems.map((x) => snap(x, t.segments)),
                decisions: a.anchors.decisions.map((x) => snap(x, t.segments)),
                questions: a.anchors.questions.map((x) => snap(x, t.segments)),
              }
            : null
          const sections = a.sections
            ? (Object.fromEntries(Object.entries(a.sections).map(([k, items]) => [k, items.map((i) => ({ ...i, t: snap(i.t, t.segments) }))])) as AnalysisDraft['sections'])
            : null
          return { ...a, anchors, sections }
        },
        opts?.signal,
      )
      return { draft: value, info: info(model) }
    },

    async outline(t, opts) {
      const durationMs = audioDurationMs(t)
      const messages: ChatMessage[] = [
        {
          role: 'system',
          content: system(
            `Split the transcript into chapters in order: for each, startMs (copied exactly from the line where the chapter begins) and a short headline in the transcript's language. The first chapter starts at 0. Aim for one chapter every few minutes.`,
          ),
        },
        { role: 'user', content: `Title: ${t.title}\nDuration: ${durationMs} ms\nTranscript:\n${renderTranscript(t, maxChars)}` },
      ]
      const { value, model } = await structured(
        'outline',
        OutlineContent,
        messages,
        (c): ChapterDraft[] => {
          const starts = new Map<number, string>()
          for (const ch of [...c.chapters].sort((a, b) => a.startMs - b.startMs)) {
            const at = starts.size === 0 ? 0 : snap(ch.startMs, t.segments)
            if (at === null || at >= durationMs || starts.has(at)) continue
            starts.set(at, ch.headline)
          }
          if (starts.size === 0) throw new InvalidAnswer('no chapter starts inside the audio')
          const list = [...starts]
          return list.map(([startMs, headline], i) => ({ startMs, endMs: list[i + 1]?.[0] ?? durationMs, headline }))
        },
        opts?.signal,
      )
      return { chapters: value, info: info(model) }
    },

    async answer(r, opts) {
      const byLabel = new Map<string, string[]>()
      for (const p of r.passages) byLabel.set(p.label, [...(byLabel.get(p.label) ?? []), p.segmentId])
      const passages = r.passages.map((p) => `${p.label} (id ${p.segmentId}${p.speaker ? `, ${p.speaker}` : ''}): ${p.text.trim()}`).join('\n')
      const messages: ChatMessage[] = [
        {
          role: 'system',
          content: system(
            `Answer the user's question from the passages of ${r.scope === 'note' ? 'one recording' : "the user's notes"} below, in the language of the question. ` +
              `Quote the passages you use by writing their label exactly as given (${r.scope === 'note' ? '[mm:ss]' : '[Note title | mm:ss]'}), and list their ids in citedSegments. ` +
              `${WHO_SPEAKS}If the passages do not answer the question, say so and cite nothing.`,
          ),
        },
        ...r.history.flatMap((h): ChatMessage[] => [
          { role: 'user', content: h.question },
          { role: 'assistant', content: h.answer },
        ]),
        { role: 'user', content: `Passages:\n${passages || '(none)'}\n\nQuestion: ${r.question}` },
      ]
      const { value, model } = await structured(
        'answer',
        AnswerContent,
        messages,
        (a) => {
          const quoted = [...a.answer.matchAll(/\[[^\]\n]{1,260}\]/g)].map((m) => m[0])
          const unknown = quoted.filter((q) => /\d{2,}:\d{2}\]$/.test(q) && !byLabel.has(q))
          if (unknown.length > 0) throw new InvalidAnswer(`the answer quotes labels that are not among the passages: ${unknown.slice(0, 3).join(', ')}`)
          // What the answer quotes is what it cites.
          const cited: string[] = []
          for (const q of quoted) for (const id of byLabel.get(q) ?? []) if (!cited.includes(id)) cited.push(id)
          return { answer: a.answer, citedSegments: cited }
        },
        opts?.signal,
      )
      return { draft: value, info: info(model) }
    },

    async deliverable(r, opts) {
      const kindRule =
        r.kind === 'email'
          ? 'An email: subject is its subject line; sections are the body in order (a section with an empty heading is plain paragraphs: greeting, intro, sign-off).'
          : r.kind === 'slides'
            ? 'A slide deck: title is the deck title; each section is one slide (heading = slide title, bullets = its points, short). subject: null.'
            : 'A document: title, then sections with headings, paragraphs and bullets. subject: null.'
      const messages: ChatMessage[] = [
        {
          role: 'system',
          content: system(
            `Write the "${r.template}" ${r.kind} in ${r.locale === 'es' ? 'Spanish' : 'English'} from the analysis and transcript of a recording dated ${r.date}. ${WHO_SPEAKS}${kindRule}`,
          ),
        },
        { role: 'user', content: `Title: ${r.transcript.title}\nAnalysis (JSON):\n${JSON.stringify(r.analysis)}\n\nTranscript:\n${renderTranscript(r.transcript, Math.floor(maxChars / 2))}` },
      ]
      const { value, model } = await structured(
        'deliverable',
        DeliverableContent,
        messages,
        (d): DeliverableDraft => {
          if (r.kind === 'email' && !d.subject) throw new InvalidAnswer('an email needs a subject')
          return { title: r.kind === 'email' ? d.subject! : d.title, subject: r.kind === 'email' ? d.subject : null, sections: d.sections }
        },
        opts?.signal,
      )
      return { draft: value, info: info(model) }
    },
  }
}

/** A schema-valid answer that breaks a rule the schema cannot say. */
class InvalidAnswer extends Error {}
