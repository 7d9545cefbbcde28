// Which episode of a podcast feed a link imports. The rule (README): when the link has a
// fragment (`feed.xml#<id>`, never sent to the server), the episode whose guid, link or
// enclosure URL equals it (or ends with it); otherwise the newest by publication date (feed
// order breaks ties and stands in when dates are missing). A directory episode id resolves to
// a guid the same way.
export interface EpisodeRef {
  guid: string | null
  link: string | null
  enclosure: { url: string } | null
  transcripts: readonly unknown[]
  /** ISO 8601 */
  publishedAt: string | null
}

export function chooseEpisode<E extends EpisodeRef>(episodes: readonly E[], wanted: string | null): E | null {
  const playable = episodes.filter((e) => e.enclosure !== null || e.transcripts.length > 0)
  if (wanted) {
    const w = wanted.trim()
    const matches = (v: string | null) => v !== null && (v === w || v.endsWith(`/${w}`) || safeDecode(v) === w)
    return playable.find((e) => matches(e.guid) || matches(e.link) || matches(e.enclosure?.url ?? null)) ?? null
  }
  let best: E | null = null
  for (const e of playable) {
    if (!best) best = e
    else if (e.publishedAt && (!best.publishedAt || e.publishedAt > best.publishedAt)) best = e
  }
  return best
}

const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
