// The local engine's answers: extractive. It quotes the retrieved passages that match the
// question best (those within reach of the best one), each marked with its label — [mm:ss] for
// one note, [Note title | mm:ss] across the library — and who said it, and, inside a long passage,
// only the sentences that carry the question's terms. It never states anything the audio does not say.
import type { AnswerDraft, AnswerRequest, Passage } from '../../ports/languageEngine.ts'
import { detectLanguage, type Lang } from '../../domain/languages.ts'
import { indexTerms } from '../../domain/search/terms.ts'
import { clip, speakerDisplay, splitText } from './text.ts'

const LEAD: Record<'note' | 'library', Record<Lang, string>> = {
  note: {
    en: 'This is what the recording says:',
    es: 'Esto es lo que dice la grabación:',
    de: 'Das sagt die Aufnahme dazu:',
    fr: "Voici ce que dit l'enregistrement :",
    it: 'Ecco cosa dice la registrazione:',
    pt: 'Isto é o que diz a gravação:',
  },
  library: {
    en: 'This is what your notes say:',
    es: 'Esto es lo que dicen tus notas:',
    de: 'Das sagen deine Notizen dazu:',
    fr: 'Voici ce que disent tes notes :',
    it: 'Ecco cosa dicono le tue note:',
    pt: 'Isto é o que dizem as tuas notas:',
  },
}

const NOTHING: Record<'note' | 'library', Record<Lang, string>> = {
  note: {
    en: 'The recording does not seem to talk about that.',
    es: 'La grabación no parece hablar de eso.',
    de: 'Die Aufnahme scheint darüber nicht zu sprechen.',
    fr: "L'enregistrement ne semble pas en parler.",
    it: 'La registrazione non sembra parlarne.',
    pt: 'A gravação não parece falar disso.',
  },
  library: {
    en: 'None of your notes seems to talk about that.',
    es: 'Ninguna de tus notas parece hablar de eso.',
    de: 'Keine deiner Notizen scheint darüber zu sprechen.',
    fr: 'Aucune de tes notes ne semble en parler.',
    it: 'Nessuna delle tue note sembra parlarne.',
    pt: 'Nenhuma das tuas notas parece falar disso.',
  },
}

/** The sentences of a passage that carry the question's terms (all of it when short). */
function quoteOf(p: Passage, terms: Set<string>): string {
  const sentences = splitText(p.text)
  if (p.text.length <= 240 || sentences.length <= 1) return clip(p.text.trim(), 400)
  const scored = sentences.map((s, i) => ({ s, i, hits: indexTerms(s).filter((t) => terms.has(t)).length }))
  const best = Math.max(...scored.map((x) => x.hits))
  if (best === 0) return clip(p.text.trim(), 400)
  return clip(
    scored
      .filter((x) => x.hits >= Math.max(1, best - 1))
      .slice(0, 3)
      .map((x) => x.s)
      .join(' … '),
    400,
  )
}

export function answerLocally(r: AnswerRequest): AnswerDraft {
  const lang = detectLanguage(r.question, detectLanguage(r.passages.map((p) => p.text).join(' ')))
  const ranked = r.passages.filter((p) => p.score > 0).sort((a, b) => b.score - a.score)
  if (ranked.length === 0) return { answer: NOTHING[r.scope][lang], citedSegments: [] }
  const top = ranked[0]!.score
  const chosen = ranked.filter((p) => p.score >= top * 0.5).slice(0, 3)
  // In the order they were said (per note), so the answer reads like the recording.
  chosen.sort((a, b) => (a.noteId === b.noteId ? a.startMs - b.startMs : 0))
  const terms = new Set(indexTerms(r.question))
  // Who said it, after the quote: the name in use, else "Speaker A" in the answer's language.
  const quotes = chosen.map((p) => {
    const who = speakerDisplay(p, lang)
    return `${p.label} “${quoteOf(p, terms)}”${who ? ` — ${who}` : ''}`
  })
  return { answer: `${LEAD[r.scope][lang]} ${quotes.join(' ')}`, citedSegments: chosen.map((p) => p.segmentId) }
}
