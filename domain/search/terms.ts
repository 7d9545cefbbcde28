// Search terms for ranked retrieval (BM25 over transcript segments): the normalised tokens of
// `tokens.ts` without function words of the six languages, cut to a short prefix. Prefix
// truncation is a crude but language-neutral stemmer: "presupuesto/presupuestos",
// "decision/decisions", "entregar/entregaremos" meet on one term in every language we serve.
import { tokenize } from './tokens.ts'
import { ALL_STOPWORDS } from '../languages.ts'

const PREFIX = 7

export function stem(token: string): string {
  let t = token
  if (t.length > 3 && t.endsWith('s') && !t.endsWith('ss')) t = t.slice(0, -1)
  return t.length > PREFIX ? t.slice(0, PREFIX) : t
}

/** Terms of a text in order (repeats kept: term frequency matters). */
export function indexTerms(text: string | null | undefined): string[] {
  const out: string[] = []
  for (const t of tokenize(text)) {
    if (ALL_STOPWORDS.has(t)) continue
    if (t.length < 2 && !/\d/.test(t)) continue
    out.push(stem(t))
  }
  return out
}

/** Term frequencies of a text. */
export function termFrequencies(text: string | null | undefined): Map<string, number> {
  const tf = new Map<string, number>()
  for (const t of indexTerms(text)) tf.set(t, (tf.get(t) ?? 0) + 1)
  return tf
}
