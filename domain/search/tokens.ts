// Free-text search without $text (FerretDB lacks it): documents keep a normalised token array and
// queries ask for all of the query's tokens with $all. Normalisation folds case and accents, so
// "Café" finds "cafe", and splits on anything that is not a letter or a digit in any script.

const SPLIT = /[^\p{L}\p{N}]+/u
const MAX_TOKEN = 40

export function tokenize(text: string | null | undefined): string[] {
  if (!text) return []
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(SPLIT)
    .filter((t) => t.length > 0)
    .map((t) => t.slice(0, MAX_TOKEN))
}

export const uniqueTokens = (...texts: (string | null | undefined)[]): string[] => [...new Set(texts.flatMap(tokenize))].sort()
