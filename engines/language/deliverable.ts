// The local engine's deliverables: the note's analysis laid out as the chosen template asks
// (an email's paragraphs, a document's sections, a deck's slides), with the template's fixed
// wording in the requested locale and the content as the recording said it.
import type { DeliverableDraft, DeliverableRequest, DeliverableSection } from '../../ports/languageEngine.ts'
import { clip, mmss, sentencesOf, speakerDisplay } from './text.ts'
import { withoutFacet } from '../../domain/language/templates.ts'

type Locale = 'es' | 'en'
const W = {
  summary: { en: 'Summary', es: 'Resumen' },
  keyPoints: { en: 'Key points', es: 'Puntos clave' },
  decisions: { en: 'Decisions', es: 'Decisiones' },
  nextSteps: { en: 'Next steps', es: 'Próximos pasos' },
  actionItems: { en: 'Action items', es: 'Tareas' },
  questions: { en: 'Open questions', es: 'Preguntas abiertas' },
  topics: { en: 'Topics', es: 'Temas' },
  details: { en: 'Details', es: 'Datos' },
  date: { en: 'Date', es: 'Fecha' },
  participants: { en: 'Participants', es: 'Participantes' },
  context: { en: 'Context', es: 'Contexto' },
  objectives: { en: 'Objectives', es: 'Objetivos' },
  scope: { en: 'Scope', es: 'Alcance' },
  risks: { en: 'Risks and open questions', es: 'Riesgos y preguntas abiertas' },
  figures: { en: 'Figures mentioned', es: 'Cifras mencionadas' },
  pending: { en: 'Pending items', es: 'Pendientes' },
  matters: { en: 'Matters discussed', es: 'Asuntos tratados' },
  agreements: { en: 'Agreements', es: 'Acuerdos' },
  obligations: { en: 'Obligations', es: 'Obligaciones' },
  pendingIssues: { en: 'Pending issues', es: 'Cuestiones pendientes' },
  reason: { en: 'Reason for the consultation', es: 'Motivo de consulta' },
  findings: { en: 'Findings discussed', es: 'Hallazgos comentados' },
  plan: { en: 'Plan', es: 'Plan' },
  patientQuestions: { en: "Patient's questions", es: 'Dudas del paciente' },
  owners: { en: 'Owners', es: 'Responsables' },
  timeline: { en: 'Timeline', es: 'Calendario' },
  challenge: { en: 'The challenge', es: 'El reto' },
  heard: { en: 'What we heard', es: 'Lo que escuchamos' },
  numbers: { en: 'Numbers', es: 'Cifras' },
  noOwner: { en: 'no owner named', es: 'sin responsable' },
  hi: { en: 'Hi all,', es: 'Hola a todos:' },
  hiOne: { en: 'Hi,', es: 'Hola:' },
  regards: { en: 'Best regards', es: 'Un saludo' },
} as const

const w = (k: keyof typeof W, l: Locale) => W[k][l]

const quoted = (title: string, l: Locale) => (l === 'es' ? `«${title}»` : `“${title}”`)

const SUBJECT: Record<string, Record<Locale, (t: string) => string>> = {
  follow_up: { en: (t) => `Follow-up: ${t}`, es: (t) => `Seguimiento: ${t}` },
  recap: { en: (t) => `Recap: ${t}`, es: (t) => `Resumen: ${t}` },
  next_steps: { en: (t) => `Next steps: ${t}`, es: (t) => `Próximos pasos: ${t}` },
  thank_you: { en: (t) => `Thank you – ${t}`, es: (t) => `Gracias – ${t}` },
}
const INTRO: Record<string, Record<Locale, (t: string, d: string) => string>> = {
  follow_up: {
    en: (t, d) => `Following up on ${t} (${d}), this is where we stand.`,
    es: (t, d) => `Como seguimiento de ${t} (${d}), así quedan las cosas.`,
  },
  recap: { en: (t, d) => `Here is a recap of ${t} (${d}).`, es: (t, d) => `Te envío el resumen de ${t} (${d}).` },
  next_steps: { en: (t, d) => `These are the next steps from ${t} (${d}).`, es: (t, d) => `Estos son los próximos pasos de ${t} (${d}).` },
  thank_you: {
    en: (t, d) => `Thank you for your time in ${t} (${d}). A short summary of what we covered:`,
    es: (t, d) => `Gracias por tu tiempo en ${t} (${d}). Un breve resumen de lo que vimos:`,
  },
}
const TITLE: Record<string, Record<Locale, (t: string) => string>> = {
  project_brief: { en: (t) => `Project brief: ${t}`, es: (t) => `Brief del proyecto: ${t}` },
  meeting_recap: { en: (t) => `Meeting recap: ${t}`, es: (t) => `Resumen de la reunión: ${t}` },
  fiscal_revision: { en: (t) => `Fiscal review: ${t}`, es: (t) => `Revisión fiscal: ${t}` },
  legal_acta: { en: (t) => `Minutes: ${t}`, es: (t) => `Acta: ${t}` },
  medical_consult: { en: (t) => `Consultation report: ${t}`, es: (t) => `Informe de consulta: ${t}` },
  exec_summary: { en: (t) => `Executive summary: ${t}`, es: (t) => `Resumen ejecutivo: ${t}` },
  kickoff: { en: (t) => `Kickoff: ${t}`, es: (t) => `Arranque: ${t}` },
  recap_visual: { en: (t) => `Recap: ${t}`, es: (t) => `Resumen visual: ${t}` },
  sales_pitch_es: { en: (t) => `Proposal: ${t}`, es: (t) => `Propuesta: ${t}` },
}
const FOOTER: Partial<Record<string, Record<Locale, (d: string) => string>>> = {
  legal_acta: { en: (d) => `Minutes drawn up from the recording of ${d}.`, es: (d) => `Acta elaborada a partir de la grabación del ${d}.` },
  medical_consult: {
    en: () => 'Drafted from the recording of the consultation; to be reviewed by the clinician.',
    es: () => 'Borrador elaborado a partir de la grabación de la consulta; debe revisarlo el profesional.',
  },
}

const section = (heading: string, bullets: string[] = [], paragraphs: string[] = []): DeliverableSection => ({ heading, paragraphs, bullets })

export function deliverableLocally(r: DeliverableRequest): DeliverableDraft {
  const l = r.locale
  const a = r.analysis
  const title = r.transcript.title
  const date = formatDate(r.date, l)
  // Each speaker once, by the name in use ("Alice J., Speaker B"), in the order they first speak.
  const participants = [...new Set(r.transcript.segments.map((s) => speakerDisplay(s, l)).filter(Boolean))]
  const action = (x: { text: string; assignee: string; deadline: string }) => {
    const who = x.assignee || w('noOwner', l)
    return x.deadline ? `${x.text} — ${who} (${x.deadline})` : `${x.text} — ${who}`
  }
  const actions = a.actionItems.map(action)
  const strip = withoutFacet
  const details = section(w('details', l), [`${w('date', l)}: ${date}`, ...(participants.length ? [`${w('participants', l)}: ${participants.join(', ')}`] : [])])
  // Sentences with figures (amounts, percentages, dates), each with its time in the recording.
  const figures = () =>
    sentencesOf(r.transcript.segments)
      .filter((s) => /\d|mil\b|thousand|million|mill[oó]n|percent|por ?ciento|euros?|d[oó]lar/i.test(s.text) && s.wordCount >= 4)
      .slice(0, 10)
      .map((s) => `[${mmss(s.startMs)}] ${clip(s.text, 200)}`)
  const nonEmpty = (sections: DeliverableSection[]) => sections.filter((s) => s.bullets.length > 0 || s.paragraphs.length > 0)
  const summaryParagraph = a.summary ? [a.summary] : []

  if (r.kind === 'email') {
    const t = quoted(title, l)
    const body: DeliverableSection[] = [section('', [], [participants.length > 1 ? w('hi', l) : w('hiOne', l), INTRO[r.template]![l](t, date)])]
    switch (r.template) {
      case 'follow_up':
        body.push(section(w('summary', l), [], summaryParagraph), section(w('decisions', l), a.decisions), section(w('nextSteps', l), actions), section(w('questions', l), a.questions))
        break
      case 'recap':
        body.push(section(w('summary', l), [], summaryParagraph), section(w('keyPoints', l), a.keyPoints), section(w('decisions', l), a.decisions), section(w('actionItems', l), actions))
        break
      case 'next_steps':
        body.push(section(w('nextSteps', l), actions.length ? actions : a.keyPoints.slice(0, 3)), section(w('questions', l), a.questions))
        break
      case 'thank_you':
        body.push(section(w('keyPoints', l), a.keyPoints.slice(0, 4).map(strip)), section(w('nextSteps', l), actions.slice(0, 5)))
        break
    }
    body.push(section('', [], [w('regards', l)]))
    return { title: SUBJECT[r.template]![l](title), subject: SUBJECT[r.template]![l](title), sections: nonEmpty(body) }
  }

  const heading = TITLE[r.template]![l](title)
  let sections: DeliverableSection[]
  switch (r.template) {
    case 'project_brief':
      sections = [
        section(w('context', l), [], summaryParagraph),
        section(w('objectives', l), a.keyPoints.map(strip)),
        section(w('scope', l), a.topics),
        section(w('decisions', l), a.decisions),
        section(w('nextSteps', l), actions),
        section(w('risks', l), a.questions),
      ]
      break
    case 'meeting_recap':
      sections = [
        details,
        section(w('summary', l), [], summaryParagraph),
        section(w('keyPoints', l), a.keyPoints),
        section(w('decisions', l), a.decisions),
        section(w('actionItems', l), actions),
        section(w('questions', l), a.questions),
      ]
      break
    case 'fiscal_revision':
      sections = [details, section(w('summary', l), [], summaryParagraph), section(w('figures', l), figures()), section(w('decisions', l), a.decisions), section(w('pending', l), actions), section(w('questions', l), a.questions)]
      break
    case 'legal_acta':
      sections = [
        details,
        section(w('matters', l), a.keyPoints.map(strip)),
        section(w('agreements', l), a.decisions),
        section(w('obligations', l), actions),
        section(w('pendingIssues', l), a.questions),
      ]
      break
    case 'medical_consult':
      sections = [
        details,
        section(w('reason', l), [], a.questions[0] ? [a.questions[0]] : summaryParagraph.slice(0, 1)),
        section(w('findings', l), a.keyPoints.map(strip)),
        section(w('plan', l), [...a.decisions, ...actions]),
        section(w('patientQuestions', l), a.questions.slice(1)),
      ]
      break
    case 'exec_summary':
      sections = [section(w('summary', l), [], summaryParagraph), section(w('keyPoints', l), a.keyPoints.slice(0, 6).map(strip)), section(w('decisions', l), a.decisions.slice(0, 6)), section(w('nextSteps', l), actions.slice(0, 6))]
      break
    case 'kickoff': {
      const owners = new Map<string, string[]>()
      for (const x of a.actionItems) owners.set(x.assignee || w('noOwner', l), [...(owners.get(x.assignee || w('noOwner', l)) ?? []), x.text])
      sections = [
        section(w('objectives', l), a.keyPoints.slice(0, 5).map(strip)),
        section(w('scope', l), a.topics.slice(0, 6)),
        section(w('owners', l), [...owners].map(([who, tasks]) => `${who}: ${tasks.join('; ')}`)),
        section(w('timeline', l), a.actionItems.filter((x) => x.deadline).map((x) => `${x.deadline}: ${x.text}`)),
        section(w('risks', l), a.questions.slice(0, 6)),
      ]
      break
    }
    case 'recap_visual': {
      const byTopic = a.topics.slice(0, 5).map((topic) => {
        const words = topic.toLowerCase().split(/\s+/).filter((x) => x.length > 3)
        return section(topic, a.keyPoints.filter((k) => words.some((x) => k.toLowerCase().includes(x))).map(strip).slice(0, 4))
      })
      sections = [section(w('summary', l), [], summaryParagraph), ...byTopic, section(w('decisions', l), a.decisions.slice(0, 6)), section(w('nextSteps', l), actions.slice(0, 6))]
      break
    }
    case 'sales_pitch_es':
      sections = [
        section(w('challenge', l), [], summaryParagraph),
        section(w('heard', l), a.keyPoints.slice(0, 6)),
        section(w('numbers', l), figures().slice(0, 6)),
        section(w('nextSteps', l), actions.slice(0, 6)),
      ]
      break
    default:
      throw new Error(`unknown deliverable template ${r.template}`)
  }
  const footer = FOOTER[r.template]
  if (footer) sections.push(section('', [], [footer[l](date)]))
  return { title: heading, subject: null, sections: nonEmpty(sections) }
}

export function formatDate(iso: string, l: Locale): string {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  return new Intl.DateTimeFormat(l === 'es' ? 'es-ES' : 'en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }).format(d)
}
