// What the note page hands its panels.

/** What a paid panel needs: the balance before it acts, and a refresh after. */
export interface Credits {
  left: number | null
  refresh: () => void
}

/** The link of a time in the note: the transcript tab at that line. */
export const timeHref = (noteId: string, ms: number) => `/app/notes/${noteId}?tab=transcript&t=${Math.max(0, Math.round(ms))}`

