// Stream names, one kind per aggregate: `<category>-<id>`. Each domain module declares its kind
// once (`export const noteStream = streamKind('note')`), so writing a stream name (`of`) and
// reading the id back out of a recorded event's stream name (`idOf`) never drift apart.

export interface StreamKind {
  readonly category: string
  /** The stream of this aggregate id. */
  of(id: string): string
  /** Whether a stream name is of this kind. */
  owns(streamName: string): boolean
  /** The aggregate id of a stream of this kind; throws on another kind's stream (a wiring mistake). */
  idOf(streamName: string): string
}

export function streamKind(category: string): StreamKind {
  const prefix = `${category}-`
  return {
    category,
    of: (id) => prefix + id,
    owns: (streamName) => streamName.startsWith(prefix),
    idOf(streamName) {
      if (!streamName.startsWith(prefix)) throw new Error(`${streamName} is not a ${category} stream`)
      return streamName.slice(prefix.length)
    },
  }
}
